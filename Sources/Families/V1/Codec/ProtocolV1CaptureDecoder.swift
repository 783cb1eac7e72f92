import Foundation
import TSGATT
import TSModels

/// Protocol v1's reader of captured bytes (`protocol decode`): frames through the same
/// reassembler as received notifications, one per stream, each read as its message; corrupt
/// frames and bytes outside any frame are shown as such.
public struct ProtocolV1CaptureDecoder: CaptureDecoder {
    public init() {}

    public func session(started: Date?) -> any CaptureSessionDecoder { Session() }

    struct Session: CaptureSessionDecoder {
        var reassemblers: [String: FrameReassembler] = [:]

        mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            reassemblers["\(channel) \(flow)", default: FrameReassembler()].append(value, at: .zero).map(Self.decoded)
        }

        mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            reassemblers["\(channel) \(flow)"]?.flush().map(Self.decoded) ?? []
        }

        static func decoded(_ event: FrameReassembler.Event) -> DecodedFrame {
            switch event {
            case let .frame(frame):
                let header = "seq \(frame.sequence), command \(frame.command), flags 0x\(String(frame.flags.rawValue, radix: 16)), \(frame.payload.count) payload byte(s)"
                switch Result(catching: { () throws(ProtocolError) -> Message in try Message(frame: frame) }) {
                case let .success(message):
                    return DecodedFrame(.frame, "\(header): \(message.kind)", meaning: message,
                                        fields: ["sequence": Int(frame.sequence), "flags": Int(frame.flags.rawValue)])
                case let .failure(error):
                    return DecodedFrame(.invalidMessage, "\(header): invalid message (\(error.code.rawValue)): \(error.message)", meaning: error.message,
                                        fields: ["sequence": Int(frame.sequence), "command": Int(frame.command.rawValue), "code": error.code.rawValue])
                }
            case let .corrupt(corrupt):
                return DecodedFrame(.corruptFrame, corrupt.error.message, meaning: corrupt.error.message,
                                    fields: ["sequence": Int(corrupt.header.sequence), "command": Int(corrupt.header.command.rawValue), "code": corrupt.error.code.rawValue])
            case let .garbage(count):
                return DecodedFrame(.garbage, "\(count) byte(s) outside any frame", fields: ["bytes": count])
            }
        }
    }
}
