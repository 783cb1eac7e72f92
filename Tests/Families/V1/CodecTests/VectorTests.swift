import Foundation
import Testing
import TSGATT
import TSModels
@testable import TSProtocol

/// The vectors in protocol-spec/v1/vectors/, produced by an independent implementation of the
/// specification (scripts/v1/v1_vectors.py).
enum Vectors {
    // Tests/Families/V1/CodecTests/VectorTests.swift → the repository.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let directory = root.appendingPathComponent("protocol-spec/v1/vectors")

    struct Valid: Decodable, CustomTestStringConvertible {
        var name: String
        var kind: String
        var sequence: UInt8
        var frame: String
        var fragments: [String: [String]]
        var testDescription: String { "\(kind): \(name)" }
    }

    struct Invalid: Decodable, CustomTestStringConvertible {
        var name: String
        var layer: String
        var input: String
        var error: String
        var testDescription: String { "\(layer) \(error): \(name)" }
    }

    struct Stream: Decodable, CustomTestStringConvertible {
        var name: String
        var chunks: [String]
        var frames: [String]
        var corrupt: Int
        var testDescription: String { name }
    }

    static func load<T: Decodable>(_ file: String, as type: T.Type) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(contentsOf: directory.appendingPathComponent(file)))
        } catch {
            Issue.record("cannot read protocol-spec/v1/vectors/\(file): \(error)")
            return try! JSONDecoder().decode(T.self, from: Data("[]".utf8))
        }
    }

    static let valid = load("valid.json", as: [Valid].self)
    static let invalid = load("invalid.json", as: [Invalid].self)
    static let streams = load("stream.json", as: [Stream].self)

    /// The body of a valid vector as a Message, through the Swift models' JSON decoding.
    static func bodyMessage(index: Int) throws -> Message {
        let raw = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("valid.json"))) as? [[String: Any]]
        let entry = try #require(raw?[index])
        let wrapped = try JSONSerialization.data(withJSONObject: ["kind": entry["kind"] as Any, "body": entry["body"] as Any])
        return try JSONDecoder().decode(Message.self, from: wrapped)
    }
}

@Suite struct VectorTests {
    @Test func everyMessageKindHasAValidVector() throws {
        #expect(Vectors.valid.count >= Message.allKinds.count)
        let missing = Set(Message.allKinds).subtracting(Vectors.valid.map(\.kind))
        #expect(missing.isEmpty, "kinds without a valid vector: \(missing.sorted())")
    }

    @Test func everyCommandHasAnInvalidVector() throws {
        let commands = Set(Vectors.invalid.filter { $0.layer == "payload" }.compactMap { vector -> UInt16? in
            let bytes = hex(vector.input)
            return bytes.count >= 6 ? UInt16(bytes[4]) | UInt16(bytes[5]) << 8 : nil
        })
        let missing = CommandID.all.filter { !commands.contains($0.rawValue) }
        #expect(missing.isEmpty, "commands without an invalid vector: \(missing)")
        let frameCodes = Set(Vectors.invalid.filter { $0.layer == "frame" }.map(\.error))
        #expect(frameCodes.isSuperset(of: ["crcMismatch", "truncatedFrame", "lengthMismatch", "badStartMarker", "unsupportedVersion", "payloadTooLarge"]))
    }

    @Test(arguments: Vectors.valid.indices)
    func validVectorDecodesEncodesAndFragments(index: Int) throws {
        let vector = Vectors.valid[index]
        let bytes = hex(vector.frame)
        let frame = try Frame.decode(bytes)
        #expect(frame.sequence == vector.sequence)
        let message = try Message(frame: frame)
        #expect(message.kind == vector.kind)
        #expect(message == (try Vectors.bodyMessage(index: index)), "decoded bytes differ from the vector's body")
        #expect(try message.frame(sequence: vector.sequence).encoded() == bytes, "encoding the body gives other bytes")

        for (mtuText, expected) in vector.fragments {
            let mtu = try ATTMTU(try #require(Int(mtuText)))
            let chunks = Fragmenter.chunks(of: bytes, mtu: mtu)
            #expect(chunks.map(hexString) == expected, "fragments at MTU \(mtuText)")
            var reassembler = FrameReassembler()
            let out = chunks.flatMap { reassembler.append($0, at: .zero) }
            #expect(out == [.frame(frame)], "reassembly at MTU \(mtuText)")
        }
        #expect(Set(vector.fragments.keys).isSuperset(of: ["23", "247", "517"]))
    }

    @Test(arguments: Vectors.invalid)
    func invalidVectorIsRejectedWithItsError(vector: Vectors.Invalid) throws {
        let bytes = hex(vector.input)
        switch vector.layer {
        case "frame":
            #expect(throws: ProtocolError.self) { try Frame.decode(bytes) }
            do { _ = try Frame.decode(bytes) } catch { #expect(error.code.rawValue == vector.error, "\(error.message)") }
        case "payload":
            let frame = try Frame.decode(bytes)
            #expect(throws: ProtocolError.self) { try Message(frame: frame) }
            do { _ = try Message(frame: frame) } catch { #expect(error.code.rawValue == vector.error, "\(error.message)") }
        default:
            Issue.record("unknown layer \(vector.layer)")
        }
    }

    @Test(arguments: Vectors.streams)
    func streamVectorYieldsItsFrames(vector: Vectors.Stream) throws {
        var reassembler = FrameReassembler()
        var events: [FrameReassembler.Event] = []
        for chunk in vector.chunks { events += reassembler.append(hex(chunk), at: .zero) }
        events += reassembler.flush()
        let frames = events.compactMap { event -> String? in
            guard case let .frame(frame) = event else { return nil }
            return (try? frame.encoded()).map(hexString)
        }
        #expect(frames == vector.frames)
        #expect(events.filter { if case .corrupt = $0 { true } else { false } }.count == vector.corrupt)
    }

    /// wire-protocol.md has a section for every command (its id in a heading) and names every error code.
    @Test func specificationCoversEveryCommandAndErrorCode() throws {
        let spec = try String(contentsOf: Vectors.root.appendingPathComponent("protocol-spec/v1/wire-protocol.md"), encoding: .utf8)
        let headings = spec.split(separator: "\n").filter { $0.hasPrefix("### ") }.joined(separator: "\n")
        for command in CommandID.all {
            let id = "`0x" + String(command.description.dropFirst(2)).uppercased() + "`"
            #expect(headings.contains(id), "no section heading for command \(id)")
        }
        for code in ProtocolError.Code.allCases {
            #expect(spec.contains("`\(code.rawValue)`"), "error code \(code.rawValue) is not documented")
        }
    }
}
