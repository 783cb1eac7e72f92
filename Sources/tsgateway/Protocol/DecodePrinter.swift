import Foundation
import TSProtocol
import TSModels

/// Prints reassembler events for `protocol decode`, as text or JSON lines.
struct DecodePrinter {
    let json: Bool
    private(set) var frames = 0
    private let encoder = JSONCoding.encoder()

    init(json: Bool) { self.json = json }

    /// `context`, for frames from a capture: which way the bytes went ("write" central → watch,
    /// "notification" watch → central), on which connection, and when (seconds into the capture).
    struct Context {
        var direction: String
        var connection: String
        var time: Double

        var text: String { direction == "write" ? " (central → watch)" : " (watch → central)" }
        var fields: [String: any Encodable] { ["direction": direction, "connection": connection, "time": (time * 1000).rounded() / 1000] }
    }

    mutating func print(_ event: FrameReassembler.Event, context: Context? = nil) throws {
        let extra = context?.fields ?? [:]
        switch event {
        case let .frame(frame):
            frames += 1
            let header = "frame \(frames)\(context?.text ?? ""): seq \(frame.sequence), command \(frame.command), flags 0x\(String(frame.flags.rawValue, radix: 16)), \(frame.payload.count) payload byte(s)"
            switch Result(catching: { () throws(ProtocolError) -> Message in try Message(frame: frame) }) {
            case let .success(message):
                if json {
                    try emit(["type": "frame", "sequence": Int(frame.sequence), "flags": Int(frame.flags.rawValue), "message": message], extra)
                } else {
                    Swift.print("\(header): \(message.kind)")
                    Swift.print("  " + String(decoding: try encoder.encode(message), as: UTF8.self))
                }
            case let .failure(error):
                if json {
                    try emit(["type": "invalidMessage", "sequence": Int(frame.sequence), "command": Int(frame.command.rawValue), "code": error.code.rawValue, "message": error.message], extra)
                } else {
                    Swift.print("\(header): invalid message (\(error.code.rawValue)): \(error.message)")
                }
            }
        case let .corrupt(corrupt):
            if json {
                try emit(["type": "corruptFrame", "sequence": Int(corrupt.header.sequence), "command": Int(corrupt.header.command.rawValue), "code": corrupt.error.code.rawValue, "message": corrupt.error.message], extra)
            } else {
                Swift.print("corrupt frame\(context?.text ?? ""): \(corrupt.error.message)")
            }
        case let .garbage(count):
            if json {
                try emit(["type": "garbage", "bytes": count], extra)
            } else {
                Swift.print("skipped \(count) byte(s) outside any frame\(context?.text ?? "")")
            }
        }
    }

    private func emit(_ object: [String: any Encodable], _ extra: [String: any Encodable]) throws {
        let line = try encoder.encode(object.merging(extra) { first, _ in first }.mapValues(AnyEncodable.init))
        Swift.print(String(decoding: line, as: UTF8.self))
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
