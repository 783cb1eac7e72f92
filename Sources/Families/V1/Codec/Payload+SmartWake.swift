import TSGATT
import TSModels

// Protocol version 1.1 (wire-protocol.md §9): EXTENSIONS, RING and ALARM_ALERT. The alarm
// record's smart window is in Payload+Alarms.swift.

/// The features of version 1.1 a connection may switch on (EXTENSIONS). Bits a later version
/// defines are kept as they are, so a request naming them can be shown and passed on.
public struct ExtensionFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Alarm records may carry a smart window (SMART flag).
    public static let smartWindows = ExtensionFeatures(rawValue: 1 << 0)
    /// The watch sends ALARM_ALERT events.
    public static let alarmAlerts = ExtensionFeatures(rawValue: 1 << 1)

    /// The features version 1.1 defines.
    public static let version1_1: ExtensionFeatures = [.smartWindows, .alarmAlerts]

    static let names: [(feature: ExtensionFeatures, name: String)] = [(.smartWindows, "smartWindows"), (.alarmAlerts, "alarmAlerts")]

    /// Names in bit order; `bitN` for a bit this version does not define.
    public var names: [String] {
        (0..<8).compactMap { bit -> String? in
            let feature = ExtensionFeatures(rawValue: 1 << bit)
            guard contains(feature) else { return nil }
            return Self.names.first { $0.feature == feature }?.name ?? "bit\(bit)"
        }
    }
}

extension ExtensionFeatures: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        var features: ExtensionFeatures = []
        for name in try container.decode([String].self) {
            if let known = Self.names.first(where: { $0.name == name }) {
                features.insert(known.feature)
            } else if name.hasPrefix("bit"), let bit = UInt8(name.dropFirst(3)), bit < 8 {
                features.insert(ExtensionFeatures(rawValue: 1 << bit))
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown extension feature \"\(name)\"")
            }
        }
        self = features
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(names)
    }
}

/// EXTENSIONS request: the features the central understands and wants on this connection.
public struct ExtensionsRequest: Payload {
    public var wanted: ExtensionFeatures

    public init(wanted: ExtensionFeatures) { self.wanted = wanted }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        wanted = ExtensionFeatures(rawValue: try reader.u8("wanted"))
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) { writer.u8(wanted.rawValue) }
}

/// EXTENSIONS response: what the watch switched on, and its longest smart window.
public struct ExtensionsResponse: Payload {
    public var enabled: ExtensionFeatures
    /// Minutes, 1…255 with smart windows enabled; 0 otherwise.
    public var maxSmartWindow: UInt8

    public init(enabled: ExtensionFeatures, maxSmartWindow: UInt8) {
        self.enabled = enabled
        self.maxSmartWindow = maxSmartWindow
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        enabled = ExtensionFeatures(rawValue: try reader.u8("enabled"))
        maxSmartWindow = try reader.u8("maxSmartWindow")
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u8(enabled.rawValue); writer.u8(maxSmartWindow)
    }

    func validate() throws(ProtocolError) {
        try checkReserved(enabled.rawValue, allowed: ExtensionFeatures.version1_1.rawValue, "enabled")
        if enabled.contains(.smartWindows) {
            guard maxSmartWindow >= 1 else { throw outOfRange("maxSmartWindow", maxSmartWindow, "1…255 with smart windows enabled") }
        } else {
            guard maxSmartWindow == 0 else { throw outOfRange("maxSmartWindow", maxSmartWindow, "0 without smart windows") }
        }
    }
}

public enum RingReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The central saw a light or awake stage inside its smart window for the alarm's next
    /// occurrence; the ring stands for that occurrence.
    case smartWake
    /// Ring once to test; changes nothing.
    case test
}

/// RING request: make the watch ring now for the alarm in `slot`.
public struct RingRequest: Payload {
    public var slot: UInt8
    public var reason: RingReason

    public init(slot: UInt8, reason: RingReason) {
        self.slot = slot
        self.reason = reason
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        slot = try reader.u8("slot")
        let value = try reader.u8("reason")
        guard Int(value) < RingReason.allCases.count else { throw outOfRange("ring reason", value, "0…1") }
        reason = RingReason.allCases[Int(value)]
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        writer.u8(slot); writer.u8(UInt8(RingReason.allCases.firstIndex(of: reason) ?? 0))
    }
}

public enum RingResult: String, Sendable, Hashable, Codable, CaseIterable {
    /// The watch started ringing.
    case ringing
    /// The alarm is ringing or snoozed now; nothing changed.
    case alreadyRinging
    /// smartWake: the alarm rang less than 255 minutes ago; nothing was done.
    case alreadyRang
}

public struct RingResponse: Payload {
    public var result: RingResult

    public init(result: RingResult) { self.result = result }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let value = try reader.u8("result")
        guard Int(value) < RingResult.allCases.count else { throw outOfRange("ring result", value, "0…2") }
        result = RingResult.allCases[Int(value)]
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        writer.u8(UInt8(RingResult.allCases.firstIndex(of: result) ?? 0))
    }
}

public enum AlarmAlertKind: String, Sendable, Hashable, Codable, CaseIterable {
    case ringing, dismissed, snoozed, timedOut
}

/// What started a ring.
public enum AlarmAlertTrigger: String, Sendable, Hashable, Codable, CaseIterable {
    /// The alarm's set time.
    case alarmTime
    /// The watch's own smart wake: a light or awake stage inside the alarm's smart window.
    case smartWindow
    /// RING with reason smartWake.
    case ringSmartWake
    /// RING with reason test.
    case ringTest
    /// The ring after a snooze.
    case snoozeEnded
}

/// ALARM_ALERT event: an alarm started ringing, or its ringing ended.
public struct AlarmAlert: Payload {
    public var kind: AlarmAlertKind
    public var slot: UInt8
    /// What started the ring this alert begins or ends.
    public var trigger: AlarmAlertTrigger
    /// Unix seconds of the change.
    public var time: UInt32
    /// For `snoozed`: minutes until it rings again (1…255); 0 for every other kind.
    public var snoozeMinutes: UInt8

    public init(kind: AlarmAlertKind, slot: UInt8, trigger: AlarmAlertTrigger, time: UInt32, snoozeMinutes: UInt8 = 0) {
        self.kind = kind
        self.slot = slot
        self.trigger = trigger
        self.time = time
        self.snoozeMinutes = snoozeMinutes
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let kindValue = try reader.u8("alert kind")
        slot = try reader.u8("alert slot")
        let triggerValue = try reader.u8("alert trigger")
        time = try reader.u32("alert time")
        snoozeMinutes = try reader.u8("snoozeMinutes")
        guard Int(kindValue) < AlarmAlertKind.allCases.count else { throw outOfRange("alert kind", kindValue, "0…3") }
        guard Int(triggerValue) < AlarmAlertTrigger.allCases.count else { throw outOfRange("alert trigger", triggerValue, "0…4") }
        kind = AlarmAlertKind.allCases[Int(kindValue)]
        trigger = AlarmAlertTrigger.allCases[Int(triggerValue)]
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u8(UInt8(AlarmAlertKind.allCases.firstIndex(of: kind) ?? 0)); writer.u8(slot)
        writer.u8(UInt8(AlarmAlertTrigger.allCases.firstIndex(of: trigger) ?? 0))
        writer.u32(time); writer.u8(snoozeMinutes)
    }

    func validate() throws(ProtocolError) {
        if kind == .snoozed {
            guard snoozeMinutes >= 1 else { throw outOfRange("snoozeMinutes", snoozeMinutes, "1…255 for a snooze") }
        } else {
            guard snoozeMinutes == 0 else { throw outOfRange("snoozeMinutes", snoozeMinutes, "0 unless snoozed") }
        }
    }
}
