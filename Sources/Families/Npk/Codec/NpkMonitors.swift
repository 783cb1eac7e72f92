import SwiftProtobuf
import TSModels

/// The watch's monitor settings of one type as NPK carries them. The gateway's `MonitorConfig`
/// holds a schedule and one alert; a set is built from the watch's current settings so that
/// the parts the gateway does not model (heart rate's exercise alarm and zone maximum, blood
/// pressure's diastolic limits) stay as the watch has them.
public enum NpkMonitorSettings: Sendable, Hashable {
    case heartRate(TSMetaHeartRateConfig)
    case stress(TSMetaStressConfig)
    case spo2(TSMetaBloodOxygenConfig)
    case bloodPressure(TSMetaBloodPressureConfig)

    /// The get, set and changed-on-the-watch commands of a type; temperature and sleep have none.
    public static func commands(for type: MonitorType) throws -> (get: NpkCommand, set: NpkCommand, changed: NpkCommand) {
        switch type {
        case .heartRate: (.heartRateConfigGet, .heartRateConfigSet, .heartRateConfigChanged)
        case .stress: (.stressConfigGet, .stressConfigSet, .stressConfigChanged)
        case .spo2: (.spo2ConfigGet, .spo2ConfigSet, .spo2ConfigChanged)
        case .bloodPressure: (.bloodPressureConfigGet, .bloodPressureConfigSet, .bloodPressureConfigChanged)
        case .temperature, .sleep:
            throw NpkError(.notSupported, "NPK watches have no \(type.name) monitor setting")
        }
    }

    /// Reads a get answer or a changed notification of `command`.
    public init(_ message: NpkMessage) throws {
        switch message.command {
        case .heartRateConfigGet, .heartRateConfigChanged: self = .heartRate(try message.payload(as: TSMetaHeartRateConfig.self))
        case .stressConfigGet, .stressConfigChanged: self = .stress(try message.payload(as: TSMetaStressConfig.self))
        case .spo2ConfigGet, .spo2ConfigChanged: self = .spo2(try message.payload(as: TSMetaBloodOxygenConfig.self))
        case .bloodPressureConfigGet, .bloodPressureConfigChanged: self = .bloodPressure(try message.payload(as: TSMetaBloodPressureConfig.self))
        default: throw NpkError(.unknownCommand, "\(message.command) carries no monitor settings")
        }
    }

    public var type: MonitorType {
        switch self {
        case .heartRate: .heartRate
        case .stress: .stress
        case .spo2: .spo2
        case .bloodPressure: .bloodPressure
        }
    }

    /// The gateway's view. Heart rate's alert is its resting alarm; blood pressure's the
    /// systolic limits.
    public func config() throws -> MonitorConfig {
        switch self {
        case let .heartRate(settings):
            MonitorConfig(type: .heartRate, schedule: try Self.schedule(settings.monitor), alert: try Self.alert(settings.restingAlarm))
        case let .stress(settings):
            MonitorConfig(type: .stress, schedule: try Self.schedule(settings.monitor), alert: try Self.alert(settings.alarm))
        case let .spo2(settings):
            MonitorConfig(type: .spo2, schedule: try Self.schedule(settings.monitor), alert: try Self.alert(settings.alarm))
        case let .bloodPressure(settings):
            MonitorConfig(type: .bloodPressure, schedule: try Self.schedule(settings.monitor),
                          alert: MonitorAlert(enabled: settings.alarm.isEnabled, upper: try Self.int16(settings.alarm.sbpMax, "systolic maximum"),
                                              lower: try Self.int16(settings.alarm.sbpMin, "systolic minimum")))
        }
    }

    /// These settings with `config`'s schedule and alert; the rest as they are.
    public func applying(_ config: MonitorConfig) throws -> NpkMonitorSettings {
        guard config.type == type else {
            throw NpkError(.valueOutOfRange, "a \(config.type.name) config cannot change \(type.name) settings", category: .invalidInput)
        }
        if let problem = config.problem {
            throw NpkError(.valueOutOfRange, "\(config.type.name) monitor: \(problem)", category: .invalidInput)
        }
        let monitor = Self.monitor(config.schedule)
        switch self {
        case var .heartRate(settings):
            settings.monitor = monitor
            settings.restingAlarm = try Self.baseAlarm(config.alert)
            return .heartRate(settings)
        case var .stress(settings):
            settings.monitor = monitor
            settings.alarm = try Self.baseAlarm(config.alert)
            return .stress(settings)
        case var .spo2(settings):
            settings.monitor = monitor
            settings.alarm = try Self.baseAlarm(config.alert)
            return .spo2(settings)
        case var .bloodPressure(settings):
            settings.monitor = monitor
            settings.alarm.isEnabled = config.alert.enabled
            settings.alarm.sbpMax = Int32(config.alert.upper)
            settings.alarm.sbpMin = Int32(config.alert.lower)
            return .bloodPressure(settings)
        }
    }

    /// The set command and its frame payload message.
    public var setRequest: (command: NpkCommand, message: any SwiftProtobuf.Message) {
        switch self {
        case let .heartRate(settings): (.heartRateConfigSet, settings)
        case let .stress(settings): (.stressConfigSet, settings)
        case let .spo2(settings): (.spo2ConfigSet, settings)
        case let .bloodPressure(settings): (.bloodPressureConfigSet, settings)
        }
    }

    static func schedule(_ monitor: TSMetaBaseMonitor) throws -> MonitorSchedule {
        MonitorSchedule(enabled: monitor.isEnabled, startMinute: try minute(monitor.start, "start"), endMinute: try minute(monitor.end, "end"),
                        intervalMinutes: try minute(monitor.interval, "interval"))
    }

    static func monitor(_ schedule: MonitorSchedule) -> TSMetaBaseMonitor {
        var monitor = TSMetaBaseMonitor()
        monitor.isEnabled = schedule.enabled
        monitor.start = Int32(schedule.startMinute)
        monitor.end = Int32(schedule.endMinute)
        monitor.interval = Int32(schedule.intervalMinutes)
        return monitor
    }

    static func alert(_ alarm: TSMetaBaseAlarm) throws -> MonitorAlert {
        MonitorAlert(enabled: alarm.isEnabled, upper: try int16(alarm.max, "alert maximum"), lower: try int16(alarm.min, "alert minimum"))
    }

    static func baseAlarm(_ alert: MonitorAlert) throws -> TSMetaBaseAlarm {
        guard alert.lower >= 0, alert.upper >= 0 else {
            throw NpkError(.valueOutOfRange, "alert limits \(alert.lower)…\(alert.upper): an NPK watch takes no negative limits", category: .invalidInput)
        }
        var alarm = TSMetaBaseAlarm()
        alarm.isEnabled = alert.enabled
        alarm.min = UInt32(alert.lower)
        alarm.max = UInt32(alert.upper)
        return alarm
    }

    private static func minute(_ value: Int32, _ what: String) throws -> UInt16 {
        guard (0...1440).contains(value) else {
            throw NpkError(.valueOutOfRange, "monitor \(what) \(value) min from the watch is outside 0…1440")
        }
        return UInt16(value)
    }

    private static func int16<T: BinaryInteger>(_ value: T, _ what: String) throws -> Int16 {
        guard let result = Int16(exactly: value) else {
            throw NpkError(.valueOutOfRange, "\(what) \(value) from the watch is outside \(Int16.min)…\(Int16.max)")
        }
        return result
    }
}
