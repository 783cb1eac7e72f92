import Foundation
import Testing
import TSGarmin

/// The vectors in protocol-spec/garmin/vectors/, written by an independent implementation of
/// protocol-spec/garmin/garmin.md (scripts/garmin/garmin_codec.py, scripts/garmin/garmin_vectors.py).
enum GarminVectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol-spec/garmin/vectors")

    struct Entry: CustomTestStringConvertible, @unchecked Sendable {
        var fields: [String: Any]
        var name: String { fields["name"] as? String ?? "?" }
        var testDescription: String { name }
        func bytes(_ key: String) -> [UInt8] { hexBytes(fields[key] as? String ?? "") }
        func int(_ key: String) -> Int { (fields[key] as? NSNumber)?.intValue ?? -1 }
        func flag(_ key: String) -> Bool { (fields[key] as? Bool) ?? false }
        func object(_ key: String) -> [String: Any] { fields[key] as? [String: Any] ?? [:] }
        func list(_ key: String) -> [Any] { fields[key] as? [Any] ?? [] }
    }

    static func load(_ file: String) -> [Entry] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)),
              let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            Issue.record("cannot read protocol-spec/garmin/vectors/\(file)")
            return []
        }
        return list.map { Entry(fields: $0) }
    }

    static let cobs = load("cobs.json")
    static let gfdi = load("gfdi.json")
    static let multilink = load("multilink.json")
    static let invalid = load("invalid.json")
    static let stream = load("stream.json")
}

func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
        bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

@Suite struct GarminVectorTests {
    @Test("CRC-16/ARC: the check value, and a running CRC equals one over the whole")
    func crc() {
        #expect(GarminCRC.checksum(Array("123456789".utf8)) == 0xBB3D)
        let bytes = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 31) }
        #expect(GarminCRC.checksum(bytes[300...], seed: GarminCRC.checksum(bytes[..<300])) == GarminCRC.checksum(bytes))
    }

    @Test("COBS: each vector's encoding, and its decoding back", arguments: GarminVectors.cobs)
    func cobs(_ vector: GarminVectors.Entry) throws {
        if !vector.flag("decodeOnly") { #expect(COBS.encode(vector.bytes("decoded")) == vector.bytes("encoded")) }
        #expect(try COBS.decode(vector.bytes("encoded")) == vector.bytes("decoded"))
    }

    @Test("GFDI: each frame built from its type and payload, read back, and delimited as on the handle", arguments: GarminVectors.gfdi)
    func gfdi(_ vector: GarminVectors.Entry) throws {
        let sequence = vector.fields["sequence"] == nil ? nil : UInt8(vector.int("sequence"))
        let frame = GFDIFrame(type: UInt16(vector.int("type")), sequence: sequence, payload: vector.bytes("payload"))
        #expect(try frame.bytes() == vector.bytes("frame"))
        #expect(try frame.delimited() == vector.bytes("delimited"))
        #expect(try GFDIFrame(bytes: vector.bytes("frame")) == frame)
    }

    @Test("multi-link control: each message written and read, the other clients' layouts read", arguments: GarminVectors.multilink)
    func multilink(_ vector: GarminVectors.Entry) throws {
        let read = try MultiLinkControl(bytes: vector.bytes("bytes"))
        #expect(Self.fields(read) == vector.object("message").mapValues { ($0 as? NSNumber)?.int64Value ?? -1 }.merging(
            ["kind": Self.kindCode(vector.object("message")["kind"] as? String)]) { _, code in code })
        if !vector.flag("readOnly") { #expect(read.bytes == vector.bytes("bytes")) }
    }

    @Test("bad frames, COBS and control messages are refused with their code", arguments: GarminVectors.invalid)
    func invalid(_ vector: GarminVectors.Entry) {
        let bytes = vector.bytes("bytes")
        let expected = vector.fields["error"] as? String
        do {
            switch vector.fields["kind"] as? String {
            case "frame": _ = try GFDIFrame(bytes: bytes)
            case "cobs": _ = try COBS.decode(bytes)
            default: _ = try MultiLinkControl(bytes: bytes)
            }
            Issue.record("\(vector.name) was read")
        } catch let error as GarminError {
            #expect(error.code.rawValue == expected, "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// swift-nio's way: every stream is also fed cut at every byte, and a byte at a time.
    @Test("a stream's frames come out however it is cut into writes", arguments: GarminVectors.stream)
    func stream(_ vector: GarminVectors.Entry) throws {
        let chunks = vector.list("chunks").map { hexBytes($0 as? String ?? "") }
        let expected = vector.list("frames").compactMap { $0 as? [String: Any] }.map {
            GFDIFrame(type: UInt16(($0["type"] as? NSNumber)?.intValue ?? -1), payload: hexBytes($0["payload"] as? String ?? ""))
        }
        func frames(_ chunks: [[UInt8]]) throws -> [GFDIFrame] {
            var splitter = COBSFrameSplitter()
            return try chunks.flatMap { splitter.append($0) }.map { try GFDIFrame(bytes: COBS.decode($0.get())) }
        }
        #expect(try frames(chunks) == expected)
        let whole = chunks.flatMap { $0 }
        for cut in 0...whole.count {
            #expect(try frames([Array(whole[..<cut]), Array(whole[cut...])]) == expected, "cut at \(cut)")
        }
        #expect(try frames(whole.map { [$0] }) == expected)
    }

    static func kindCode(_ kind: String?) -> Int64 {
        ["registerRequest": 0, "registerResponse": 1, "closeHandleRequest": 2, "closeHandleResponse": 3, "closeAllRequest": 5, "closeAllResponse": 6][kind ?? ""] ?? -1
    }

    static func fields(_ message: MultiLinkControl) -> [String: Int64] {
        switch message {
        case let .registerRequest(client, service, reliable):
            ["kind": 0, "client": Int64(client), "service": Int64(service), "reliable": Int64(reliable)]
        case let .registerResponse(client, service, status, handle, reliable):
            ["kind": 1, "client": Int64(client), "service": Int64(service), "status": Int64(status), "handle": Int64(handle), "reliable": Int64(reliable)]
        case let .closeHandleRequest(client, service, handle):
            ["kind": 2, "client": Int64(client), "service": Int64(service), "handle": Int64(handle)]
        case let .closeHandleResponse(client, service, handle, status):
            ["kind": 3, "client": Int64(client), "service": Int64(service), "handle": Int64(handle), "status": Int64(status)]
        case let .closeAllRequest(client): ["kind": 5, "client": Int64(client)]
        case let .closeAllResponse(client): ["kind": 6, "client": Int64(client)]
        }
    }
}

@Suite struct GarminFramingTests {
    @Test("COBS round-trips any bytes; its form holds no zero", arguments: [0, 1, 2, 253, 254, 255, 508, 509, 1000])
    func cobsRoundTrip(length: Int) throws {
        var generator = SystemRandomNumberGenerator()
        for zeroEvery in [0, 2, 7, 300] {
            let bytes = (0..<length).map { index in
                zeroEvery > 0 && index % zeroEvery == 0 ? UInt8(0) : UInt8.random(in: 1...255, using: &generator)
            }
            let encoded = COBS.encode(bytes)
            #expect(!encoded.contains(0))
            #expect(try COBS.decode(encoded) == bytes)
        }
    }

    @Test("a frame longer than the splitter's limit is refused and the next one still comes out")
    func overlongFrame() throws {
        var splitter = COBSFrameSplitter(limit: 16)
        let next = try GFDIFrame(type: GFDIType.systemEvent, payload: [16, 0]).delimited()
        let found = splitter.append([0] + Array(repeating: UInt8(0x11), count: 40) + next)
        #expect(found.count == 2)
        #expect(throws: GarminError.self) { try found[0].get() }
        #expect(try GFDIFrame(bytes: COBS.decode(found[1].get())).type == GFDIType.systemEvent)
    }

    @Test("a compact type outside 5000…5255 is refused, not sent as another type")
    func compactTypeOutOfRange() {
        #expect(throws: GarminError.self) { try GFDIFrame(type: 5300, sequence: 1, payload: []).bytes() }
    }
}
