import TSModels

/// The time a Garmin central writes of its own: `now` in its answer to the watch's
/// CURRENT_TIME_REQUEST (§5), a RESPONSE written whole in one value (`<handle> 00 COBS 00`). The
/// rest is the answer with `now` zeroed, its reference, offset and transitions kept.
public struct GarminCentralTimes: CentralTimeReader {
    public init() {}

    public func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes? {
        guard channel == .main, bytes.count > 3, bytes[0] != MultiLinkControl.controlHandle, bytes[1] == 0, bytes.last == 0,
              let decoded = try? COBS.decode(bytes[2..<(bytes.count - 1)]), let frame = try? GFDIFrame(bytes: decoded),
              frame.type == GFDIType.response, let response = try? GFDIResponse(payload: frame.payload),
              response.originalType == GFDIType.currentTimeRequest, response.status == .ack,
              let answer = try? GarminCurrentTimeRequest.answered(response) else { return nil }
        var rest = response
        // reference:u32, then now:u32 at 4…7 of the extra bytes.
        for offset in 4..<8 { rest.extra[offset] = 0 }
        guard let restBytes = try? rest.frame.bytes() else { return nil }
        return CentralTimes(rest: [bytes[0]] + restBytes, fields: [.init(.clock, GarminTime.unix(answer.now))])
    }
}
