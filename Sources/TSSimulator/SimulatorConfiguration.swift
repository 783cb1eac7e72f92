import TSModels
import TSProtocol

/// How the simulated watch presents itself and behaves.
public struct SimulatorConfiguration: Sendable, Hashable {
    public var model: String
    public var firmware: String
    public var capabilities: DeviceCapabilities
    /// Most unacknowledged sleep pages the watch keeps in flight.
    public var maxWindow: UInt8
    /// Resend unacknowledged pages when the window has not moved for this long.
    public var pageRetransmitTimeout: Duration
    /// Resend an unacknowledged event after this long (up to 3 times).
    public var eventRetransmitTimeout: Duration
    public var battery: BatteryStatus

    public init(
        model: String = "TS-Sim W10", firmware: String = "1.4.2",
        capabilities: DeviceCapabilities = .simulatorDefault,
        maxWindow: UInt8 = 16,
        pageRetransmitTimeout: Duration = .milliseconds(1000),
        eventRetransmitTimeout: Duration = .milliseconds(1000),
        battery: BatteryStatus = BatteryStatus(level: 82, state: .discharging)
    ) {
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
        self.maxWindow = maxWindow
        self.pageRetransmitTimeout = pageRetransmitTimeout
        self.eventRetransmitTimeout = eventRetransmitTimeout
        self.battery = battery
    }
}

extension DeviceCapabilities {
    /// A 10-alarm watch with naps (rule 1), 64-byte remarks, live sleep and every monitor type.
    public static let simulatorDefault = DeviceCapabilities(
        maxAlarms: 10, labelMaxBytes: 32, remarkMaxBytes: 64, statisticsRule: .withNap, supportsNaps: true,
        deletesSyncedRecords: false, supportsLiveSleep: true, monitorTypes: MonitorType.allCases)
}

extension MonitorConfig {
    /// What a watch reports for a type that was never configured.
    public static func factoryDefault(_ type: MonitorType) -> MonitorConfig {
        switch type {
        case .heartRate: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 10), alert: MonitorAlert(enabled: true, upper: 120, lower: 40))
        case .spo2: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 30), alert: MonitorAlert(enabled: true, upper: 100, lower: 90))
        case .bloodPressure: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: false, intervalMinutes: 60), alert: MonitorAlert(enabled: false, upper: 140, lower: 90))
        case .stress: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 30), alert: MonitorAlert(enabled: false, upper: 80, lower: 0))
        case .temperature: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: false, intervalMinutes: 60), alert: MonitorAlert(enabled: false, upper: 380, lower: 350))
        case .sleep: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, startMinute: 0, endMinute: 1440, intervalMinutes: 5))
        }
    }
}

extension Alarm {
    /// The alarm a new simulated watch starts with: Work, 06:45 on workdays, snooze allowed.
    public static let simulatorDefault = Alarm(slot: 0, label: "Work", hour: 6, minute: 45, snoozeAllowed: true, repeatDays: .workdays)
}

/// Everything the watch stores; Codable so a simulated watch can persist between runs.
public struct SimulatorState: Sendable, Hashable, Codable {
    public var alarms: [Alarm]
    public var monitors: [MonitorConfig]
    /// Sorted by (start, stage).
    public var records: [SleepItem]
    /// Set by TIME_SET.
    public var utcOffset: Int32?
    public var zone: String?

    public init(alarms: [Alarm] = [], monitors: [MonitorConfig] = [], records: [SleepItem] = []) {
        self.alarms = alarms
        self.monitors = monitors
        self.records = records.sorted { ($0.start, $0.stage) < ($1.start, $1.stage) }
    }
}
