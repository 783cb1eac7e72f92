import Foundation
import SwiftProtobuf
import TSModels

/// The NPK dialect's reader of captured bytes (`protocol decode`): frames through the same
/// reassembler as the central's, each read as its command's protobuf message and, where the
/// gateway maps it, as sleep items, heart-rate samples and alarms. Frames with a wrong CRC and
/// frame starts whose bytes stopped coming are shown as such. A bind's or login's auth code is
/// never shown.
public struct NpkCaptureDecoder: CaptureDecoder {
    public init() {}

    public func session(started: Date?) -> any CaptureSessionDecoder { Session() }

    /// What `--json` shows of one frame as `message`.
    public struct Meaning: Sendable, Encodable {
        public var command: String
        public var cmd: Int
        public var key: Int
        public var listTotal: Int?
        public var listIndex: Int?
        /// The protobuf payload in its JSON mapping; nil for an empty payload.
        public var payload: JSONValue?
        public var records: [SleepItem]?
        public var heartRate: [HeartRateSample]?
        public var alarms: [Alarm]?
    }

    struct Session: CaptureSessionDecoder {
        var reassemblers: [String: NpkReassembler] = [:]

        mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            reassemblers["\(channel) \(flow)", default: NpkReassembler()].feed(value).map { Self.decoded($0, flow: flow) }
        }

        mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            reassemblers["\(channel) \(flow)"]?.flush().map { Self.decoded($0, flow: flow) } ?? []
        }

        static func decoded(_ output: NpkReassembler.Output, flow: CaptureFlow) -> DecodedFrame {
            switch output {
            case let .frame(frame):
                let header = "seq \(frame.sequence), \(frame.command), flags 0x\(hex2(frame.flags.rawValue)), \(frame.payload.count) payload byte(s)"
                let fields: [String: any Encodable & Sendable] = ["sequence": Int(frame.sequence), "flags": Int(frame.flags.rawValue)]
                do {
                    let message = try NpkMessage(frame, from: flow == .write ? .toWatch : .fromWatch)
                    let meaning = try Self.meaning(of: message)
                    return DecodedFrame(.frame, "\(header): \(message.info.name)\(Self.gist(meaning))", meaning: meaning, fields: fields)
                } catch {
                    let code = (error as? NpkError)?.code.rawValue ?? "payloadDoesNotParse"
                    return DecodedFrame(.invalidMessage, "\(header): invalid message (\(code)): \(error)", meaning: "\(error)",
                                        fields: fields.merging(["code": code, "cmd": Int(frame.command.cmd), "key": Int(frame.command.key)]) { first, _ in first })
                }
            case let .dropped(.crcMismatch(command, sequence, length)):
                return DecodedFrame(.corruptFrame, "\(command) seq \(sequence), \(length) payload byte(s): the CRC-16 does not match",
                                    meaning: "crc mismatch", fields: ["sequence": Int(sequence), "cmd": Int(command.cmd), "key": Int(command.key), "code": "crcMismatch"])
            case let .dropped(.lengthOverBound(length)):
                return DecodedFrame(.garbage, "an 0xab with a length of \(length) (over 0x2000, no frame start)", fields: ["code": "lengthOverBound", "length": length])
            case let .dropped(.truncated(received)):
                return DecodedFrame(.corruptFrame, "a frame start whose bytes stopped coming after \(received) byte(s)", meaning: "truncated",
                                    fields: ["code": "truncated", "bytes": received])
            }
        }

        static func meaning(of message: NpkMessage) throws -> Meaning {
            var meaning = Meaning(command: message.info.name, cmd: Int(message.command.cmd), key: Int(message.command.key),
                                  listTotal: message.position.map { Int($0.total) }, listIndex: message.position.map { Int($0.index) })
            var payload = message.message
            if var auth = payload as? TSMetaAuthParam, !auth.authCode.isEmpty {
                auth.authCode = "(hidden)"
                payload = auth
            }
            if let payload { meaning.payload = JSONValue(json: try payload.jsonString()) }
            switch message.message {
            case let day as TSMetaSleepDay: meaning.records = NpkSleep.records(from: day).items
            case let day as TSMetaHeartRateDay: meaning.heartRate = NpkHeartRate.samples(from: day).samples
            case let list as TSMetaAlarmList: meaning.alarms = try NpkAlarms.alarms(from: list)
            default: break
            }
            return meaning
        }

        static func gist(_ meaning: Meaning) -> String {
            var parts: [String] = []
            if let total = meaning.listTotal, let index = meaning.listIndex { parts.append("list item \(index + 1) of \(total)") }
            if let records = meaning.records { parts.append("\(records.count) sleep item(s)") }
            if let samples = meaning.heartRate { parts.append("\(samples.count) heart-rate sample(s)") }
            if let alarms = meaning.alarms { parts.append("\(alarms.count) alarm(s)") }
            return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
        }
    }
}
