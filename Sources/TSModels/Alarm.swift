import Foundation

/// Days an alarm repeats on. Bit 0 is Monday … bit 6 Sunday, as on the wire; no bit set means
/// the alarm rings once.
public struct AlarmRepeat: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let monday = AlarmRepeat(rawValue: 1 << 0)
    public static let tuesday = AlarmRepeat(rawValue: 1 << 1)
    public static let wednesday = AlarmRepeat(rawValue: 1 << 2)
    public static let thursday = AlarmRepeat(rawValue: 1 << 3)
    public static let friday = AlarmRepeat(rawValue: 1 << 4)
    public static let saturday = AlarmRepeat(rawValue: 1 << 5)
    public static let sunday = AlarmRepeat(rawValue: 1 << 6)

    public static let once: AlarmRepeat = []
    public static let workdays: AlarmRepeat = [.monday, .tuesday, .wednesday, .thursday, .friday]
    public static let weekend: AlarmRepeat = [.saturday, .sunday]
    public static let everyday: AlarmRepeat = [.workdays, .weekend]

    /// The seven days in week order (Monday first) with their short names.
    public static let days: [(day: AlarmRepeat, name: String)] = [
        (.monday, "mon"), (.tuesday, "tue"), (.wednesday, "wed"), (.thursday, "thu"),
        (.friday, "fri"), (.saturday, "sat"), (.sunday, "sun"),
    ]

    /// True when only the seven day bits are used (bit 7 is reserved on the wire).
    public var isValid: Bool { rawValue & 0x80 == 0 }

    /// Whether an alarm with these days may ring on the day `date` falls on in `calendar`'s zone
    /// (a once-alarm may ring any day).
    public func allows(_ date: Date, in calendar: Calendar) -> Bool {
        guard self != .once else { return true }
        // Calendar weekdays: 1 Sunday … 7 Saturday; repeat bits: Monday = bit 0 … Sunday = bit 6.
        let bit = (calendar.component(.weekday, from: date) + 5) % 7
        return contains(AlarmRepeat(rawValue: 1 << UInt8(bit)))
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt8.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One alarm of the watch's alarm table (TopStep `TSAlarmClockModel`).
public struct Alarm: Sendable, Hashable {
    /// The longest label the protocol carries, in UTF-8 bytes.
    public static let maxLabelBytes = 32
    /// The longest smart window protocol v1.1 carries, in minutes.
    public static let maxSmartWindow = 255
    /// The longest smart window the gateway keeps for an alarm: RING smartWake is refused for an
    /// occurrence further ahead (wire-protocol.md §9).
    public static let maxGatewaySmartWindow = 255

    /// Device-side slot, 0…255, unique within a table.
    public var slot: UInt8
    /// App-side identifier for tracking an alarm across edits; kept by the gateway, never sent to the watch.
    public var identifier: String?
    public var label: String
    public private(set) var hour: UInt8
    public private(set) var minute: UInt8
    public var isEnabled: Bool
    /// Whether the alarm offers snooze ("remind later").
    public var snoozeAllowed: Bool
    public var remark: String
    public var repeatDays: AlarmRepeat
    /// Smart wake (protocol v1.1): minutes before its time in which the watch may ring early, at
    /// the first light or awake stage; 0 = off, the alarm rings at its time.
    public var smartWindow: UInt8

    /// Creates an alarm exactly as given. Out-of-range values are kept so they can be reported
    /// by `validate`; use `setTime(hour:minute:)` for the SDK's clamping behaviour.
    public init(
        slot: UInt8, identifier: String? = nil, label: String = "", hour: UInt8, minute: UInt8,
        isEnabled: Bool = true, snoozeAllowed: Bool = false, remark: String = "", repeatDays: AlarmRepeat = .once,
        smartWindow: UInt8 = 0
    ) {
        self.slot = slot
        self.identifier = identifier
        self.label = label
        self.hour = hour
        self.minute = minute
        self.isEnabled = isEnabled
        self.snoozeAllowed = snoozeAllowed
        self.remark = remark
        self.repeatDays = repeatDays
        self.smartWindow = smartWindow
    }

    /// Sets the time, clamping to 0…23 and 0…59 as the TopStep SDK does (25:75 → 23:59, −5:−10 → 0:00).
    public mutating func setTime(hour: Int, minute: Int) {
        self.hour = UInt8(min(max(hour, 0), 23))
        self.minute = UInt8(min(max(minute, 0), 59))
    }

    /// The problems that make this alarm unfit for a watch with `limits`, first one first;
    /// empty when it fits.
    public func problems(limits: AlarmLimits = .protocolMaximum) -> [AlarmProblem] {
        var found: [AlarmProblem] = []
        if hour > 23 { found.append(.hourOutOfRange(slot: slot, hour: Int(hour))) }
        if minute > 59 { found.append(.minuteOutOfRange(slot: slot, minute: Int(minute))) }
        if !repeatDays.isValid { found.append(.reservedRepeatBit(slot: slot, mask: repeatDays.rawValue)) }
        let labelBytes = label.utf8.count
        if labelBytes > limits.labelMaxBytes {
            found.append(.labelTooLong(slot: slot, bytes: labelBytes, limit: limits.labelMaxBytes))
        }
        let remarkBytes = remark.utf8.count
        if remarkBytes > limits.remarkMaxBytes {
            found.append(.remarkTooLong(slot: slot, bytes: remarkBytes, limit: limits.remarkMaxBytes))
        }
        if Int(smartWindow) > limits.maxSmartWindow {
            found.append(.smartWindowTooLong(slot: slot, minutes: Int(smartWindow), limit: limits.maxSmartWindow))
        }
        return found
    }
}

/// Per-watch limits an alarm table must fit (from the watch's capabilities).
public struct AlarmLimits: Sendable, Hashable {
    public var maxAlarms: Int
    public var labelMaxBytes: Int
    public var remarkMaxBytes: Int
    /// The longest smart window in minutes; 0: the watch has no smart wake.
    public var maxSmartWindow: Int

    public init(maxAlarms: Int, labelMaxBytes: Int, remarkMaxBytes: Int, maxSmartWindow: Int = Alarm.maxSmartWindow) {
        self.maxAlarms = maxAlarms
        self.labelMaxBytes = labelMaxBytes
        self.remarkMaxBytes = remarkMaxBytes
        self.maxSmartWindow = maxSmartWindow
    }

    /// What the wire format itself can carry.
    public static let protocolMaximum = AlarmLimits(maxAlarms: 255, labelMaxBytes: Alarm.maxLabelBytes, remarkMaxBytes: 255)
}

/// Why an alarm or an alarm table does not fit a watch. The description names the alarm,
/// the value and the limit.
public enum AlarmProblem: Error, Sendable, Hashable, CustomStringConvertible {
    case tooManyAlarms(count: Int, limit: Int)
    case duplicateSlot(slot: UInt8)
    case hourOutOfRange(slot: UInt8, hour: Int)
    case minuteOutOfRange(slot: UInt8, minute: Int)
    case reservedRepeatBit(slot: UInt8, mask: UInt8)
    case labelTooLong(slot: UInt8, bytes: Int, limit: Int)
    case remarkTooLong(slot: UInt8, bytes: Int, limit: Int)
    case smartWindowTooLong(slot: UInt8, minutes: Int, limit: Int)

    public var description: String {
        switch self {
        case let .tooManyAlarms(count, limit):
            limit == 0
                ? "this watch has no alarms, but \(count) were given"
                : "\(count) alarms given, but this watch holds at most \(limit)"
        case let .duplicateSlot(slot): "slot \(slot) is used by more than one alarm"
        case let .hourOutOfRange(slot, hour): "alarm in slot \(slot): hour \(hour) is out of range 0…23"
        case let .minuteOutOfRange(slot, minute): "alarm in slot \(slot): minute \(minute) is out of range 0…59"
        case let .reservedRepeatBit(slot, mask): "alarm in slot \(slot): repeat mask 0x\(String(mask, radix: 16)) uses bit 7, which is reserved (Monday = bit 0 … Sunday = bit 6)"
        case let .labelTooLong(slot, bytes, limit): "alarm in slot \(slot): label is \(bytes) bytes of UTF-8, limit \(limit)"
        case let .remarkTooLong(slot, bytes, limit):
            limit == 0
                ? "alarm in slot \(slot): this watch takes no remarks, but one of \(bytes) bytes was given"
                : "alarm in slot \(slot): remark is \(bytes) bytes of UTF-8, limit \(limit)"
        case let .smartWindowTooLong(slot, minutes, limit):
            limit == 0
                ? "alarm in slot \(slot): this watch has no smart wake (its smart-window limit is 0 minutes), but a \(minutes)-minute smart window was given"
                : "alarm in slot \(slot): smart window is \(minutes) minutes, this watch's limit is \(limit)"
        }
    }
}

extension Array where Element == Alarm {
    /// Every problem that keeps this table off a watch with `limits`: count, duplicate slots,
    /// then each alarm's own problems in table order.
    public func problems(limits: AlarmLimits = .protocolMaximum) -> [AlarmProblem] {
        var found: [AlarmProblem] = []
        if count > limits.maxAlarms { found.append(.tooManyAlarms(count: count, limit: limits.maxAlarms)) }
        var seen = Set<UInt8>()
        for alarm in self where !seen.insert(alarm.slot).inserted {
            found.append(.duplicateSlot(slot: alarm.slot))
        }
        for alarm in self { found += alarm.problems(limits: limits) }
        return found
    }
}

/// Why an alarm table is what it is: read from the watch, written by this gateway, or changed
/// on the watch side (by the person on the wrist, by another phone app, or by a one-time alarm
/// switching itself off after it rang).
public enum AlarmTableOrigin: String, Sendable, Hashable, Codable, CaseIterable {
    case read
    case gateway
    case watch
    case app
    case onceAlarmFired

    /// The origin stored in alarm histories written by tsgateway 0.2 (`set` for the gateway's writes).
    public init?(stored text: String) {
        if text == "set" { self = .gateway } else { self.init(rawValue: text) }
    }
}
