/// What a watch can measure on its own schedule. Raw values are the wire values.
public enum MonitorType: UInt8, Sendable, Hashable, CaseIterable, Comparable {
    case heartRate = 0
    case spo2 = 1
    case bloodPressure = 2
    case stress = 3
    case temperature = 4
    case sleep = 5

    /// The name used in JSON and on the command line.
    public var name: String {
        switch self {
        case .heartRate: "heartRate"
        case .spo2: "spo2"
        case .bloodPressure: "bloodPressure"
        case .stress: "stress"
        case .temperature: "temperature"
        case .sleep: "sleep"
        }
    }

    /// The unit of this type's alert limits.
    public var alertUnit: String {
        switch self {
        case .heartRate: "bpm"
        case .spo2: "%"
        case .bloodPressure: "mmHg (systolic)"
        case .stress: "index 0…100"
        case .temperature: "0.1 °C"
        case .sleep: "unused"
        }
    }

    /// Accepts the JSON names and common spellings: `heart-rate`, `hr`, `SpO2`, `bp`, `temp`.
    public init?(name: String) {
        let key = name.lowercased().filter { $0.isLetter || $0.isNumber }
        switch key {
        case "heartrate", "hr", "heart": self = .heartRate
        case "spo2", "oxygen": self = .spo2
        case "bloodpressure", "bp": self = .bloodPressure
        case "stress": self = .stress
        case "temperature", "temp": self = .temperature
        case "sleep": self = .sleep
        default: return nil
        }
    }

    public static func < (lhs: MonitorType, rhs: MonitorType) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension MonitorType: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let type = MonitorType(name: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "monitor type \"\(text)\" is not one of heartRate, spo2, bloodPressure, stress, temperature, sleep")
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// When the watch measures: a daily window [startMinute, endMinute) and a period.
public struct MonitorSchedule: Sendable, Hashable, Codable {
    public var enabled: Bool
    /// Minute of the day the window opens, 0…1439.
    public var startMinute: UInt16
    /// Minute of the day the window closes, 1…1440, after `startMinute`.
    public var endMinute: UInt16
    /// Minutes between measurements: a multiple of 5 in 5…1440.
    public var intervalMinutes: UInt16

    public init(enabled: Bool, startMinute: UInt16 = 0, endMinute: UInt16 = 1440, intervalMinutes: UInt16 = 10) {
        self.enabled = enabled
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.intervalMinutes = intervalMinutes
    }
}

/// When the watch alerts: a reading above `upper` or below `lower`, in the type's unit.
public struct MonitorAlert: Sendable, Hashable, Codable {
    public var enabled: Bool
    public var upper: Int16
    public var lower: Int16

    public init(enabled: Bool, upper: Int16 = 0, lower: Int16 = 0) {
        self.enabled = enabled
        self.upper = upper
        self.lower = lower
    }
}

/// The automatic-monitoring settings of one measurement type (TopStep `TSAutoMonitorConfigs`).
public struct MonitorConfig: Sendable, Hashable, Codable {
    public var type: MonitorType
    public var schedule: MonitorSchedule
    public var alert: MonitorAlert

    public init(type: MonitorType, schedule: MonitorSchedule, alert: MonitorAlert = MonitorAlert(enabled: false)) {
        self.type = type
        self.schedule = schedule
        self.alert = alert
    }

    /// The first rule this config breaks, or nil when it is valid.
    public var problem: MonitorConfigProblem? {
        let s = schedule
        if s.startMinute > 1439 { return .startOutOfRange(s.startMinute) }
        if s.endMinute == 0 || s.endMinute > 1440 { return .endOutOfRange(s.endMinute) }
        if s.endMinute <= s.startMinute { return .endNotAfterStart(start: s.startMinute, end: s.endMinute) }
        if s.intervalMinutes < 5 || s.intervalMinutes > 1440 { return .intervalOutOfRange(s.intervalMinutes) }
        if s.intervalMinutes % 5 != 0 { return .intervalNotMultipleOf5(s.intervalMinutes) }
        if alert.enabled && alert.lower >= alert.upper { return .alertLimitsInverted(lower: alert.lower, upper: alert.upper) }
        return nil
    }
}

public enum MonitorConfigProblem: Error, Sendable, Hashable, CustomStringConvertible {
    case startOutOfRange(UInt16)
    case endOutOfRange(UInt16)
    case endNotAfterStart(start: UInt16, end: UInt16)
    case intervalOutOfRange(UInt16)
    case intervalNotMultipleOf5(UInt16)
    case alertLimitsInverted(lower: Int16, upper: Int16)

    public var description: String {
        switch self {
        case let .startOutOfRange(minute): "window start minute \(minute) is out of range 0…1439"
        case let .endOutOfRange(minute): "window end minute \(minute) is out of range 1…1440"
        case let .endNotAfterStart(start, end):
            "window end \(MinuteOfDay.format(end)) is not after its start \(MinuteOfDay.format(start)); windows cannot wrap past midnight"
        case let .intervalOutOfRange(interval): "interval \(interval) min is out of range 5…1440"
        case let .intervalNotMultipleOf5(interval): "interval \(interval) min is not a multiple of 5"
        case let .alertLimitsInverted(lower, upper): "alert lower limit \(lower) is not below the upper limit \(upper)"
        }
    }
}

/// Formatting of minutes since midnight as HH:MM.
public enum MinuteOfDay {
    public static func format(_ minute: UInt16) -> String {
        let hours = Int(minute) / 60, minutes = Int(minute) % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (minutes < 10 ? "0" : "") + String(minutes)
    }
}

/// A measurement a device takes all day on its own schedule once switched on: only on or off can be
/// set (a ring's SpO2, stress and heart-rate variability). `MonitorType` is protocol v1's
/// wire list and has no HRV, so these switches are their own type.
public enum SwitchedMonitor: String, Sendable, Hashable, CaseIterable, Codable {
    case spo2
    case stress
    /// Heart-rate variability.
    case hrv

    /// The monitor type measuring the same thing, where there is one.
    public var monitorType: MonitorType? {
        switch self {
        case .spo2: .spo2
        case .stress: .stress
        case .hrv: nil
        }
    }
}
