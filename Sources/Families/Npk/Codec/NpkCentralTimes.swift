import SwiftProtobuf
import TSModels

/// The times an NPK central writes of its own: the clock in login and bind (`TSMetaAuthParam.time`)
/// and in a time set (`TSMetaTimeModel`), and a sync's range (`TSMetaSyncStartRequest`: the start
/// from the sync's range, the end from the clock). A request written in one frame.
public struct NpkCentralTimes: CentralTimeReader {
    public init() {}

    public func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes? {
        guard channel == .main, let frame = try? NpkFrame(decoding: bytes) else { return nil }
        var fields: [CentralTimes.Field] = []
        let rest: any SwiftProtobuf.Message
        do {
            switch frame.command {
            case .login, .bind:
                var param = try TSMetaAuthParam(serializedBytes: frame.payload)
                guard param.hasTime else { return nil }
                fields.append(.init(.clock, NpkTime.unix(fromT2000: param.time.timestamp)))
                param.time.timestamp = 0
                rest = param
            case .timeSet:
                var model = try TSMetaTimeModel(serializedBytes: frame.payload)
                fields.append(.init(.clock, NpkTime.unix(fromT2000: model.timestamp)))
                model.timestamp = 0
                rest = model
            case .syncStart:
                var request = try TSMetaSyncStartRequest(serializedBytes: frame.payload)
                fields += [.init(.rangeStart, NpkTime.unix(fromT2000: request.start)), .init(.clock, NpkTime.unix(fromT2000: request.end))]
                request.start = 0
                request.end = 0
                rest = request
            default:
                return nil
            }
            var header = frame
            header.payload = try rest.serializedBytes()
            return CentralTimes(rest: try header.encoded(), fields: fields)
        } catch {
            return nil
        }
    }
}
