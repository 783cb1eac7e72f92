import TSGATT
import TSModels

public struct LiveSubscribe: Payload {
    public var enable: Bool

    public init(enable: Bool) { self.enable = enable }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let value = try reader.u8("enable")
        guard value <= 1 else { throw outOfRange("enable", value, "0…1") }
        enable = value == 1
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) { writer.u8(enable ? 1 : 0) }
}

public enum LiveStageKind: String, Sendable, Hashable, Codable, CaseIterable {
    case fellAsleep, stageChanged, wokeUp
}

/// LIVE_STAGE event: the wearer's sleep stage changed just now.
public struct LiveStageEvent: Payload {
    public var kind: LiveStageKind
    public var stage: SleepStage
    public var time: UInt32

    public init(kind: LiveStageKind, stage: SleepStage, time: UInt32) {
        self.kind = kind
        self.stage = stage
        self.time = time
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let kindValue = try reader.u8("kind")
        let stageValue = try reader.u8("stage")
        time = try reader.u32("time")
        guard Int(kindValue) < LiveStageKind.allCases.count else { throw outOfRange("live event kind", kindValue, "0…2") }
        guard let stage = SleepStage(rawValue: stageValue) else {
            throw ProtocolError(.unknownSleepStage, "sleep stage \(stageValue) is unknown (0 awake … 3 REM)")
        }
        kind = LiveStageKind.allCases[Int(kindValue)]
        self.stage = stage
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        writer.u8(UInt8(LiveStageKind.allCases.firstIndex(of: kind) ?? 0)); writer.u8(stage.rawValue); writer.u32(time)
    }
}

/// ERROR: a failed request's answer, or a NACK of a corrupt frame.
public struct ErrorReport: Payload {
    public static let messageLimit = 200
    public static let unknownCommand: UInt16 = 0xFFFF

    public var status: StatusCode
    /// The offending frame's command id; 0xFFFF when unknown.
    public var command: UInt16
    public var sequence: UInt8
    public var message: String

    public init(status: StatusCode, command: UInt16, sequence: UInt8, message: String) {
        self.status = status
        self.command = command
        self.sequence = sequence
        self.message = message
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        status = StatusCode(rawValue: try reader.u8("status"))
        command = try reader.u16("command")
        sequence = try reader.u8("sequence")
        message = try reader.string("message", limit: Self.messageLimit)
        guard status.rawValue != 0 else { throw outOfRange("status", 0, "1…255") }
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        guard status.rawValue != 0 else { throw outOfRange("status", 0, "1…255") }
        writer.u8(status.rawValue); writer.u16(command); writer.u8(sequence)
        try writer.string(message, "message", limit: Self.messageLimit)
    }
}
