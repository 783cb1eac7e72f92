import TSModels

/// What the central writes to the Heart Rate Control Point (`2A39`) (protocol-spec/huami/huami.md §5).
public enum HuamiHeartRateCommand: Sendable, Hashable {
    /// `[14, minutes]`: the all-day measurement interval; 0 = off.
    case interval(minutes: UInt8)
    /// `[15 00 01]` on, `[15 00 00]` off: heart rate measured during sleep.
    case sleepMonitoring(Bool)
    /// `[15 02 01]` start, `[15 02 00]` stop: a one-off measurement, read on `2A37` (miband2).
    case manualMeasurement(Bool)

    public static let intervalOpcode: UInt8 = 0x14
    public static let switchOpcode: UInt8 = 0x15
    public static let sleepMode: UInt8 = 0x00
    public static let manualMode: UInt8 = 0x02

    public var bytes: [UInt8] {
        switch self {
        case let .interval(minutes): [Self.intervalOpcode, minutes]
        case let .sleepMonitoring(on): [Self.switchOpcode, Self.sleepMode, on ? 1 : 0]
        case let .manualMeasurement(on): [Self.switchOpcode, Self.manualMode, on ? 1 : 0]
        }
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard let opcode = raw.first else { throw HuamiError(.tooShort, "an empty heart-rate control command") }
        switch opcode {
        case Self.intervalOpcode:
            guard raw.count == 2 else { throw HuamiError(.badLength, "an interval command has 2 bytes, not \(raw.count)") }
            self = .interval(minutes: raw[1])
        case Self.switchOpcode:
            guard raw.count == 3 else { throw HuamiError(.badLength, "a heart-rate switch has 3 bytes, not \(raw.count)") }
            guard raw[2] <= 1 else { throw HuamiError(.invalidValue, "heart-rate switch value \(hex(raw[2])) is neither 00 (off) nor 01 (on)") }
            switch raw[1] {
            case Self.sleepMode: self = .sleepMonitoring(raw[2] == 1)
            case Self.manualMode: self = .manualMeasurement(raw[2] == 1)
            default: throw HuamiError(.unknownOpcode, "heart-rate switch mode \(hex(raw[1])) is neither 00 (sleep) nor 02 (manual)")
            }
        default:
            throw HuamiError(.unknownOpcode, "heart-rate control opcode \(hex(opcode)) is neither 14 nor 15")
        }
    }

    /// The command a monitor config becomes: `heartRate` → the all-day interval (0 when disabled),
    /// `sleep` → sleep heart-rate monitoring. The band has no window and no alert: a config with
    /// either, or another type, is `windowNotSupported`; an interval of 0 or above 255 minutes is
    /// `intervalOutOfRange`.
    public init(_ config: MonitorConfig) throws(HuamiError) {
        guard config.schedule.startMinute == 0, config.schedule.endMinute == 1440, !config.alert.enabled else {
            throw HuamiError(.windowNotSupported, "a band measures \(config.type.name) all day without alerts; the config has a window or an alert")
        }
        switch config.type {
        case .heartRate:
            guard config.schedule.enabled else { self = .interval(minutes: 0); return }
            guard (1...255).contains(config.schedule.intervalMinutes) else {
                throw HuamiError(.intervalOutOfRange, "a band's heart-rate interval is 1 … 255 minutes, not \(config.schedule.intervalMinutes)")
            }
            self = .interval(minutes: UInt8(config.schedule.intervalMinutes))
        case .sleep:
            self = .sleepMonitoring(config.schedule.enabled)
        default:
            throw HuamiError(.windowNotSupported, "a band has no \(config.type.name) monitor settings")
        }
    }
}
