import Foundation
import TSProtocol

/// Prints reassembler events for `protocol decode`, as text or JSON lines.
struct DecodePrinter {
    let json: Bool
    private(set) var frames = 0
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(json: Bool) { self.json = json }

    mutating func print(_ event: FrameReassembler.Event) throws {
        switch event {
        case let .frame(frame):
            frames += 1
            let header = "frame \(frames): seq \(frame.sequence), command \(frame.command), flags 0x\(String(frame.flags.rawValue, radix: 16)), \(frame.payload.count) payload byte(s)"
            switch Result(catching: { () throws(ProtocolError) -> Message in try Message(frame: frame) }) {
            case let .success(message):
                if json {
                    try emit(["type": "frame", "sequence": Int(frame.sequence), "flags": Int(frame.flags.rawValue), "message": message] as [String: any Encodable])
                } else {
                    Swift.print("\(header): \(message.kind)")
                    Swift.print("  " + String(decoding: try encoder.encode(message), as: UTF8.self))
                }
            case let .failure(error):
                if json {
                    try emit(["type": "invalidMessage", "sequence": Int(frame.sequence), "command": Int(frame.command.rawValue), "code": error.code.rawValue, "message": error.message] as [String: any Encodable])
                } else {
                    Swift.print("\(header): invalid message (\(error.code.rawValue)): \(error.message)")
                }
            }
        case let .corrupt(corrupt):
            if json {
                try emit(["type": "corruptFrame", "sequence": Int(corrupt.header.sequence), "command": Int(corrupt.header.command.rawValue), "code": corrupt.error.code.rawValue, "message": corrupt.error.message] as [String: any Encodable])
            } else {
                Swift.print("corrupt frame: \(corrupt.error.message)")
            }
        case let .garbage(count):
            if json {
                try emit(["type": "garbage", "bytes": count] as [String: any Encodable])
            } else {
                Swift.print("skipped \(count) byte(s) outside any frame")
            }
        }
    }

    private func emit(_ object: [String: any Encodable]) throws {
        let line = try encoder.encode(object.mapValues(AnyEncodable.init))
        Swift.print(String(decoding: line, as: UTF8.self))
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
