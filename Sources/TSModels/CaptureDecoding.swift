import Foundation

/// Which of a dialect's characteristics a captured value went over: one of the profile's
/// write/notify pairs (`main`, `second`), or a characteristic the profile names by service and
/// UUID (`GATTProfile.characteristics`) for a dialect that speaks over more than two pairs.
/// Spelled `main`, `second`, or `SERVICE/CHARACTERISTIC` (128-bit UUIDs, lower case) in captures and JSON.
public struct CaptureChannel: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// The profile's first pair (its write and notify characteristics).
    public static let main = CaptureChannel(checked: "main")
    /// The profile's second pair (`GATTProfile.secondChannel`, a ring's big-data service).
    public static let second = CaptureChannel(checked: "second")
    /// The profile's two pairs, the channels of a dialect that names no characteristics of its own.
    public static let pairs: [CaptureChannel] = [.main, .second]

    /// `main`, `second` or `SERVICE/CHARACTERISTIC`; nil for anything else.
    public init?(rawValue: String) {
        let text = rawValue.lowercased()
        guard text == "main" || text == "second" || CaptureChannel.characteristic(in: text) != nil else { return nil }
        self.rawValue = text
    }

    /// The channel of one characteristic.
    public init(_ characteristic: GATTCharacteristicID) {
        rawValue = characteristic.service + "/" + characteristic.uuid
    }

    private init(checked: String) { rawValue = checked }

    /// The characteristic of a channel named by one; nil for the profile's pairs.
    public var characteristic: GATTCharacteristicID? { CaptureChannel.characteristic(in: rawValue) }

    public var description: String { rawValue }

    private static func characteristic(in text: String) -> GATTCharacteristicID? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy(isUUID) else { return nil }
        return GATTCharacteristicID(service: String(parts[0]), uuid: String(parts[1]))
    }

    private static func isUUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

/// Which way a captured value went.
public enum CaptureFlow: String, Sendable, Hashable, Codable {
    /// Central → watch (an ATT write).
    case write
    /// Watch → central (an ATT notification).
    case notification
    /// Watch → central: the value of a characteristic the central read (an ATT read response).
    case read
}

/// A dialect's reader of captured bytes: `protocol decode` asks a dialect's registration for
/// one and never branches on the dialect's name. Pure: no I/O.
public protocol CaptureDecoder: Sendable {
    /// A fresh decoder for one connection's exchange. `started` is when its first value was
    /// captured (nil for pasted bytes); a dialect whose records are dated relative to the
    /// watch's day (a ring's "days ago") dates them from it.
    func session(started: Date?) -> any CaptureSessionDecoder
    /// The same, for a peripheral whose name the capture holds (a GAP Device Name read): a
    /// dialect whose values read differently by model (a band's sample size) goes by it.
    func session(started: Date?, peripheralName: String?) -> any CaptureSessionDecoder
    /// The same reader for a watch whose clock runs in `zone`: a dialect that dates what it sends by
    /// the watch's local clock (a ring's) reads it there; the others have no use for it.
    func reading(clockIn zone: TimeZone) -> any CaptureDecoder
    /// Whether values that pass this channel's checks are evidence enough to take a handle for it
    /// in a capture without a GATT discovery. False for a characteristic whose values carry no
    /// check of their own (a battery level, a clock), which a few bytes of any other dialect pass.
    func identifiesHandles(of channel: CaptureChannel) -> Bool
}

extension CaptureDecoder {
    public func session(started: Date?, peripheralName: String?) -> any CaptureSessionDecoder { session(started: started) }
    public func reading(clockIn zone: TimeZone) -> any CaptureDecoder { self }
    public func identifiesHandles(of channel: CaptureChannel) -> Bool { true }
}

/// Decodes one connection's values in capture order, each stream (pair and direction) on its
/// own, with what the central asked for in mind. Bytes that fail the dialect's checks come back
/// as frames with another verdict than `.frame`, never dropped.
public protocol CaptureSessionDecoder {
    /// The frames completed by `value` (a frame may span values, a value may hold several).
    mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame]
    /// What is left of one stream when the exchange ends: a frame whose bytes stopped coming.
    mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame]
}

/// One frame of a dialect, or bytes that failed its checks, with its meaning.
public struct DecodedFrame: Sendable {
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// A frame that passed its checks and whose payload reads as a message.
        case frame
        /// A frame that passed its checks whose payload does not read as a message of its command.
        case invalidMessage
        /// Bytes shaped like a frame that fail its checks (checksum, length).
        case corruptFrame
        /// Bytes outside any frame.
        case garbage
    }

    public var verdict: Verdict
    /// One line for people: the command and its gist, or what is wrong.
    public var text: String
    /// The meaning (fields, sleep items, alarms), printed as JSON under `text` and as the
    /// `message` key of `--json`; nil when there is none.
    public var meaning: (any Encodable & Sendable)?
    /// More keys of the frame's `--json` object (sequence, command, code…).
    public var fields: [String: any Encodable & Sendable]

    public init(_ verdict: Verdict, _ text: String, meaning: (any Encodable & Sendable)? = nil, fields: [String: any Encodable & Sendable] = [:]) {
        self.verdict = verdict
        self.text = text
        self.meaning = meaning
        self.fields = fields
    }

    /// A frame in the sense of "the dialect's framing held": valid or with an unreadable payload.
    public var isFrame: Bool { verdict == .frame || verdict == .invalidMessage }
}

extension CaptureDecoder {
    /// How many of `values`, taken as one stream, decode as frames that pass the dialect's checks.
    public func frameCount(_ values: [[UInt8]], channel: CaptureChannel, flow: CaptureFlow) -> Int {
        var decoder = session(started: nil)
        var count = 0
        for value in values { count += decoder.append(value, channel: channel, flow: flow).filter(\.isFrame).count }
        return count + decoder.finish(channel: channel, flow: flow).filter(\.isFrame).count
    }

    /// `values`, taken as one stream, decoded: how many frames passed every check (`.frame`) and
    /// how many did not (any other verdict).
    public func verdicts(_ values: [[UInt8]], channel: CaptureChannel, flow: CaptureFlow) -> (passed: Int, failed: Int) {
        var decoder = session(started: nil)
        var frames: [DecodedFrame] = []
        for value in values { frames += decoder.append(value, channel: channel, flow: flow) }
        frames += decoder.finish(channel: channel, flow: flow)
        let passed = frames.filter { $0.verdict == .frame }.count
        return (passed, frames.count - passed)
    }
}

/// Any JSON value, for a meaning that comes as JSON (a protobuf message's JSON mapping).
public indirect enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value of JSON text; nil when it is not JSON.
    public init?(json: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) else { return nil }
        self = value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .number(value):
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }
}
