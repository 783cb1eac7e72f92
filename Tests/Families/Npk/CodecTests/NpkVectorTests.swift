import Foundation
import SwiftProtobuf
import Testing
import TSModels
import TSNpk

func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// A JSON value of a vector, kept whole so that a body can be handed to SwiftProtobuf's JSON decoder.
enum JSONValue: Decodable, Hashable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    var any: Any {
        switch self {
        case .null: NSNull()
        case let .bool(value): value
        case let .number(value): Int64(exactly: value).map { $0 as Any } ?? value
        case let .string(value): value
        case let .array(values): values.map(\.any)
        case let .object(members): members.mapValues(\.any)
        }
    }

    var jsonText: String {
        String(decoding: try! JSONSerialization.data(withJSONObject: any, options: [.fragmentsAllowed, .sortedKeys]), as: UTF8.self)
    }

    subscript(key: String) -> JSONValue? { if case let .object(members) = self { members[key] } else { nil } }
    var array: [JSONValue] { if case let .array(values) = self { values } else { [] } }
    var int: Int64? { if case let .number(value) = self { Int64(exactly: value) } else { nil } }
    var string: String? { if case let .string(value) = self { value } else { nil } }
    var bool: Bool? { if case let .bool(value) = self { value } else { nil } }
}

/// The vectors in protocol-spec/npk/vectors/, written by an independent implementation of
/// protocol-spec/npk/topstep-npk.md (scripts/npk/npk_codec.py, Google's protobuf runtime).
enum NpkVectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("protocol-spec/npk/vectors")

    struct ListHeader: Decodable, Hashable { var total: UInt32; var index: UInt32 }

    struct Valid: Decodable, CustomTestStringConvertible {
        var name: String
        var command: String
        var direction: String
        var cmd: UInt8
        var key: UInt8
        var flags: UInt8
        var sequence: UInt16
        var list: ListHeader?
        var body: JSONValue
        var frame: String
        var chunks: [String: [String]]
        var mapped: JSONValue?
        var testDescription: String { "\(command) \(direction): \(name)" }
    }

    struct Invalid: Decodable, CustomTestStringConvertible {
        var name: String
        var layer: String
        var direction: String?
        var command: String?
        var input: String?
        var inputs: [String]?
        var error: String
        var records: JSONValue?
        var rejected: JSONValue?
        var testDescription: String { "\(layer) \(error): \(name)" }
    }

    struct Stream: Decodable, CustomTestStringConvertible {
        var name: String
        var chunks: [String]
        var frames: [String]
        var drops: [String: Int]
        var testDescription: String { name }
    }

    static func load<T: Decodable>(_ file: String, as type: T.Type) -> [T] {
        do {
            return try JSONDecoder().decode([T].self, from: Data(contentsOf: directory.appendingPathComponent(file)))
        } catch {
            Issue.record("cannot read protocol-spec/npk/vectors/\(file): \(error)")
            return []
        }
    }

    static let valid = load("valid.json", as: Valid.self)
    static let invalid = load("invalid.json", as: Invalid.self)
    static let streams = load("stream.json", as: Stream.self)
}

func errorCode(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as NpkError {
        return error.code.rawValue
    } catch {
        return "not an NpkError: \(error)"
    }
}

@Suite struct NpkVectorTests {
    @Test func theVectorsCoverEveryCommandAndEveryRejection() {
        let covered = Set(NpkVectors.valid.map(\.command))
        let known = Set(NpkCommand.known.values.map(\.name))
        #expect(known.subtracting(covered).isEmpty, "commands without a valid vector: \(known.subtracting(covered).sorted())")
        let errors = Set(NpkVectors.invalid.map(\.error))
        for required in ["crcMismatch", "lengthOverBound", "listIndexOutOfOrder", "unknownCommand", "payloadDoesNotParse", "negativeDuration"] {
            #expect(errors.contains(required), "no invalid vector for \(required)")
        }
        #expect(NpkVectors.streams.count >= 10)
    }

    @Test func theSDKsOwnExampleFrameIsReproducedByteForByte() throws {
        let example = hex("ab0621000012269900040a062f6d75736963" + "10e1de92a509" + "18b0ba1f")
        let frame = try NpkFrame(decoding: example)
        #expect(frame.command == .fileHead && frame.sequence == 4 && frame.flags == [])
        let head = try NpkMessage(frame, from: .toWatch).payload(as: TSMetaFileHead.self)
        #expect(head.path == "/music" && head.crc32 == 0x94A4_AF61 && head.size == 515_376)
        var built = TSMetaFileHead()
        built.path = "/music"
        built.crc32 = 0x94A4_AF61
        built.size = 515_376
        #expect(try NpkFrame(command: .fileHead, sequence: 4, message: built).encoded() == example)
        #expect(NpkVectors.valid.first?.frame == example.map { hex2($0) }.joined())
    }

    @Test(arguments: NpkVectors.valid)
    func validFrameDecodesToItsBodyAndBack(vector: NpkVectors.Valid) throws {
        let bytes = hex(vector.frame)
        let frame = try NpkFrame(decoding: bytes)
        #expect(frame.command == NpkCommand(cmd: vector.cmd, key: vector.key))
        #expect(frame.flags.rawValue == vector.flags && frame.sequence == vector.sequence)
        #expect(try frame.encoded() == bytes)
        let direction = try #require(NpkDirection(rawValue: vector.direction))
        let message = try NpkMessage(frame, from: direction)
        #expect(message.info.name == vector.command)
        #expect(message.position == vector.list.map { NpkListPosition(total: $0.total, index: $0.index) })
        let element = vector.list == nil ? frame.payload : Array(frame.payload.dropFirst(NpkListPosition.size))
        if let type = message.info.messageType(direction) {
            let expected = try type.init(jsonString: vector.body.jsonText, extensions: nil, options: JSONDecodingOptions())
            let decoded = try #require(message.message)
            #expect(decoded.isEqualTo(message: expected), "decoded \(decoded) expected \(expected)")
            #expect(try expected.serializedBytes() as [UInt8] == element, "SwiftProtobuf encodes the body as the Python runtime did")
        } else {
            #expect(message.message == nil && element.isEmpty && vector.body == .object([:]))
        }
        for (size, chunks) in vector.chunks {
            #expect(NpkChunking.chunks(bytes, size: Int(size)!).map { $0.map { hex2($0) }.joined() } == chunks, "chunk size \(size)")
            var reassembler = NpkReassembler()
            let out = chunks.flatMap { reassembler.feed(hex($0)) } + reassembler.flush()
            #expect(out == [.frame(frame)], "reassembled from chunks of \(size)")
        }
        if let mapped = vector.mapped { try checkMapping(message, mapped) }
    }

    private func checkMapping(_ message: NpkMessage, _ mapped: JSONValue) throws {
        switch message.info.name {
        case "sleepData":
            let records = NpkSleep.records(from: try message.payload(as: TSMetaSleepDay.self))
            #expect(records.items.map(recordJSON) == mapped["records"]?.array.map(\.jsonText))
            #expect(records.rejected.map { $0.error.code.rawValue } == mapped["rejected"]?.array.compactMap { $0["error"]?.string })
        case "heartRateData":
            let day = NpkHeartRate.samples(from: try message.payload(as: TSMetaHeartRateDay.self))
            let expected = mapped["samples"]?.array.map { ($0["time"]!.int!, Int($0["bpm"]!.int!)) } ?? []
            #expect(day.samples.map { Int64($0.time.timeIntervalSince1970) } == expected.map(\.0))
            #expect(day.samples.map(\.bpm) == expected.map(\.1))
            #expect(Int64(day.rejectedManualReadings) == mapped["rejectedManual"]?.int)
            #expect(!day.samples.isEmpty)
        case "alarmsGet", "alarmsSet":
            let alarms = try NpkAlarms.alarms(from: try message.payload(as: TSMetaAlarmList.self))
            let expected = mapped["alarms"]?.array ?? []
            #expect(alarms.count == expected.count)
            for (alarm, want) in zip(alarms, expected) {
                #expect(Int64(alarm.slot) == want["slot"]?.int && alarm.isEnabled == want["enabled"]?.bool)
                #expect(Int64(alarm.hour) == want["hour"]?.int && Int64(alarm.minute) == want["minute"]?.int)
                #expect(Int64(alarm.repeatDays.rawValue) == want["repeat"]?.int && alarm.label == want["label"]?.string)
                #expect(!alarm.snoozeAllowed && alarm.remark.isEmpty && alarm.smartWindow == 0)
            }
            // and back: the gateway's alarms become the same list
            let list = try NpkAlarms.list(from: alarms, maxAlarms: 10)
            #expect(list == (try message.payload(as: TSMetaAlarmList.self)))
        case "battery", "batteryChanged":
            let status = try NpkDevice.battery(from: try message.payload(as: TSMetaBatteryModel.self))
            #expect(Int64(status.level) == mapped["battery"]?["level"]?.int)
            #expect(status.state.rawValue == mapped["battery"]?["state"]?.string)
        default:
            Issue.record("no mapping check for \(message.info.name)")
        }
    }

    private func recordJSON(_ item: SleepItem) -> String {
        JSONValue.object(["stage": .string(item.stage.name), "start": .number(Double(item.start)),
                          "duration": .number(Double(item.duration))]).jsonText
    }

    @Test(arguments: NpkVectors.invalid)
    func invalidInputIsRejectedWithItsCode(vector: NpkVectors.Invalid) throws {
        switch vector.layer {
        case "frame":
            #expect(errorCode { _ = try NpkFrame(decoding: hex(vector.input!)) } == vector.error)
        case "message":
            let frame = try NpkFrame(decoding: hex(vector.input!))
            let direction = try #require(vector.direction.flatMap(NpkDirection.init(rawValue:)))
            #expect(errorCode { _ = try NpkMessage(frame, from: direction) } == vector.error)
        case "list":
            let frames = try vector.inputs!.map { try NpkFrame(decoding: hex($0)) }
            var assembler = NpkListAssembler()
            #expect(errorCode {
                for frame in frames { try assembler.add(frame) }
                _ = try assembler.finish()
            } == vector.error)
        case "mapping":
            let message = try NpkMessage(try NpkFrame(decoding: hex(vector.input!)), from: .fromWatch)
            switch vector.command {
            case "sleepData":
                let records = NpkSleep.records(from: try message.payload(as: TSMetaSleepDay.self))
                #expect(records.rejected.map { $0.error.code.rawValue } == [vector.error])
                #expect(records.items.map(recordJSON) == vector.records?.array.map(\.jsonText))
                #expect(records.rejected.map { Int64($0.index) } == vector.rejected?.array.compactMap { $0["index"]?.int })
                #expect(records.rejected.allSatisfy { $0.error.category == .protocolError })
            case "alarmsGet":
                #expect(errorCode { _ = try NpkAlarms.alarms(from: try message.payload(as: TSMetaAlarmList.self)) } == vector.error)
            case "battery":
                #expect(errorCode { _ = try NpkDevice.battery(from: try message.payload(as: TSMetaBatteryModel.self)) } == vector.error)
            default:
                Issue.record("no mapping check for \(vector.command ?? "nil")")
            }
        default:
            Issue.record("unknown layer \(vector.layer)")
        }
    }

    @Test(arguments: NpkVectors.streams)
    func streamReassemblesToItsFramesAndCountsItsDrops(vector: NpkVectors.Stream) throws {
        var reassembler = NpkReassembler()
        var out = vector.chunks.flatMap { reassembler.feed(hex($0)) }
        out += reassembler.flush()
        let frames = out.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
        #expect(try frames.map { try $0.encoded() } == vector.frames.map(hex))
        let expected = NpkStreamDropCounts(crcMismatch: vector.drops["crcMismatch"] ?? 0, lengthOverBound: vector.drops["lengthOverBound"] ?? 0,
                                           truncated: vector.drops["truncated"] ?? 0)
        #expect(reassembler.drops == expected)
        #expect(out.count - frames.count == expected.crcMismatch + expected.lengthOverBound + expected.truncated, "every drop is reported as it happens")
        #expect(reassembler.pendingByteCount == 0)
    }
}

func hex2(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return byte < 0x10 ? "0" + text : text
}
