import TSGATT
import TSModels

extension Alarm {
    init(from reader: inout ByteReader) throws(ProtocolError) {
        let slot = try reader.u8("alarm slot")
        let flags = try reader.u8("alarm \(slot) flags")
        let hour = try reader.u8("alarm \(slot) hour")
        let minute = try reader.u8("alarm \(slot) minute")
        let repeatMask = try reader.u8("alarm \(slot) repeat")
        let label = try reader.string("alarm \(slot) label", limit: Alarm.maxLabelBytes, tooLong: .labelTooLong)
        let remark = try reader.string("alarm \(slot) remark", limit: 255)
        try checkReserved(flags, allowed: 0b111, "alarm \(slot) flags")
        // Version 1.1's SMART flag: the smart window follows the remark (§9.3).
        var smartWindow: UInt8 = 0
        if flags & Self.smartFlag != 0 {
            smartWindow = try reader.u8("alarm \(slot) smart window")
            guard smartWindow >= 1 else { throw outOfRange("alarm \(slot) smart window", 0, "1…255 with SMART set (no smart window: SMART clear)") }
        }
        self.init(slot: slot, label: label, hour: hour, minute: minute, isEnabled: flags & 1 != 0,
                  snoozeAllowed: flags & 2 != 0, remark: remark, repeatDays: AlarmRepeat(rawValue: repeatMask), smartWindow: smartWindow)
        if let problem = problems().first { throw ProtocolError(problem) }
    }

    func write(to writer: inout ByteWriter) throws(ProtocolError) {
        if let problem = problems().first { throw ProtocolError(problem) }
        writer.u8(slot)
        writer.u8((isEnabled ? 1 : 0) | (snoozeAllowed ? 2 : 0) | (smartWindow > 0 ? Self.smartFlag : 0))
        writer.u8(hour); writer.u8(minute); writer.u8(repeatDays.rawValue)
        try writer.string(label, "alarm \(slot) label", limit: Alarm.maxLabelBytes, tooLong: .labelTooLong)
        try writer.string(remark, "alarm \(slot) remark", limit: 255)
        if smartWindow > 0 { writer.u8(smartWindow) }
    }

    /// Flag bit 2 of the record: a smart window follows (protocol v1.1).
    static let smartFlag: UInt8 = 0b100
}

extension ProtocolError {
    init(_ problem: AlarmProblem) {
        let code: Code = switch problem {
        case .tooManyAlarms: .valueOutOfRange
        case .duplicateSlot: .duplicateSlot
        case .hourOutOfRange: .hourOutOfRange
        case .minuteOutOfRange: .minuteOutOfRange
        case .reservedRepeatBit: .reservedBitsSet
        case .labelTooLong: .labelTooLong
        case .remarkTooLong: .stringTooLong
        case .smartWindowTooLong: .valueOutOfRange
        }
        self.init(code, problem.description)
    }
}

/// The whole alarm table: ALARMS_GET response and ALARMS_SET request.
public struct AlarmTable: Payload {
    public var alarms: [Alarm]

    public init(alarms: [Alarm]) { self.alarms = alarms }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let count = Int(try reader.u8("alarm count"))
        alarms = []
        alarms.reserveCapacity(count)
        for _ in 0..<count { alarms.append(try Alarm(from: &reader)) }
        if let problem = alarms.problems().first { throw ProtocolError(problem) }
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        if let problem = alarms.problems().first { throw ProtocolError(problem) }
        writer.u8(UInt8(alarms.count))
        for alarm in alarms { try alarm.write(to: &writer) }
    }
}

public enum AlarmChangeOrigin: String, Sendable, Hashable, Codable, CaseIterable {
    /// Edited on the watch itself.
    case watch
    /// Set by another central.
    case otherCentral
    /// A one-time alarm rang and switched itself off.
    case onceAlarmFired
}

/// ALARMS_CHANGED event: why the table changed and the whole new table.
public struct AlarmsChanged: Payload {
    public var origin: AlarmChangeOrigin
    public var alarms: [Alarm]

    public init(origin: AlarmChangeOrigin, alarms: [Alarm]) {
        self.origin = origin
        self.alarms = alarms
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let originValue = try reader.u8("origin")
        guard Int(originValue) < AlarmChangeOrigin.allCases.count else { throw outOfRange("origin", originValue, "0…2") }
        origin = AlarmChangeOrigin.allCases[Int(originValue)]
        alarms = try AlarmTable(from: &reader).alarms
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        writer.u8(UInt8(AlarmChangeOrigin.allCases.firstIndex(of: origin) ?? 0))
        try AlarmTable(alarms: alarms).write(to: &writer)
    }
}

// MARK: Monitors

/// MONITOR_GET request: which type's config to read.
public struct MonitorRequest: Payload {
    public var type: MonitorType

    public init(type: MonitorType) { self.type = type }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        type = try MonitorType(wire: try reader.u8("monitor type"))
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) { writer.u8(type.rawValue) }
}

extension MonitorType {
    init(wire value: UInt8) throws(ProtocolError) {
        guard let type = MonitorType(rawValue: value) else {
            throw ProtocolError(.unknownMonitorType, "monitor type \(value) is unknown (0 heart rate … 5 sleep)")
        }
        self = type
    }
}

extension MonitorConfig: Payload {
    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let type = try MonitorType(wire: try reader.u8("monitor type"))
        let flags = try reader.u8("monitor flags")
        let start = try reader.u16("startMinute")
        let end = try reader.u16("endMinute")
        let interval = try reader.u16("intervalMinutes")
        let upper = try reader.i16("alertUpper")
        let lower = try reader.i16("alertLower")
        try checkReserved(flags, allowed: 0b11, "monitor flags")
        self.init(type: type,
                  schedule: MonitorSchedule(enabled: flags & 1 != 0, startMinute: start, endMinute: end, intervalMinutes: interval),
                  alert: MonitorAlert(enabled: flags & 2 != 0, upper: upper, lower: lower))
        try checkRules()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try checkRules()
        writer.u8(type.rawValue)
        writer.u8((schedule.enabled ? 1 : 0) | (alert.enabled ? 2 : 0))
        writer.u16(schedule.startMinute); writer.u16(schedule.endMinute); writer.u16(schedule.intervalMinutes)
        writer.i16(alert.upper); writer.i16(alert.lower)
    }

    private func checkRules() throws(ProtocolError) {
        guard let problem else { return }
        let code: ProtocolError.Code = switch problem {
        case .startOutOfRange: .windowStartOutOfRange
        case .endOutOfRange: .windowEndOutOfRange
        case .endNotAfterStart: .windowEndNotAfterStart
        case .intervalOutOfRange: .intervalOutOfRange
        case .intervalNotMultipleOf5: .intervalNotMultipleOf5
        case .alertLimitsInverted: .alertLimitsInverted
        }
        throw ProtocolError(code, "\(type.name): \(problem)")
    }
}
