import TSModels
import TSProtocol

/// How the simulated watch presents itself and behaves.
public struct SimulatorConfiguration: Sendable, Hashable {
    public var model: String
    public var firmware: String
    public var capabilities: DeviceInfoCapabilities
    /// Most unacknowledged sleep pages the watch keeps in flight.
    public var maxWindow: UInt8
    /// Resend unacknowledged pages when the window has not moved for this long.
    public var pageRetransmitTimeout: Duration
    /// Resend an unacknowledged event after this long (up to 3 times).
    public var eventRetransmitTimeout: Duration
    public var battery: BatteryStatus
    /// Whether the watch speaks protocol v1.1 (EXTENSIONS, smart windows, RING, ALARM_ALERT);
    /// false: a version-1 watch, which lists and answers none of it. The v1.1 limits come from
    /// `capabilities` (`maxSmartWindow`, `supportsRing`, `reportsAlarmAlerts`).
    public var speaksVersion1_1: Bool
    /// How long a ring lasts unanswered before the watch stops it.
    public var ringDuration: Duration
    /// How long a snooze lasts, in minutes.
    public var snoozeMinutes: UInt8
    /// Every response goes out twice, the second after the first: a watch that answers a request
    /// and its resend both (issue 47: answers that come twice or for an earlier request).
    public var answersTwice = false

    public init(
        model: String = "TS-Sim W10", firmware: String = "1.4.2",
        capabilities: DeviceInfoCapabilities = .simulatorDefault,
        maxWindow: UInt8 = 16,
        pageRetransmitTimeout: Duration = .milliseconds(1000),
        eventRetransmitTimeout: Duration = .milliseconds(1000),
        battery: BatteryStatus = BatteryStatus(level: 82, state: .discharging),
        speaksVersion1_1: Bool = true,
        ringDuration: Duration = .seconds(60),
        snoozeMinutes: UInt8 = 9
    ) {
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
        self.maxWindow = maxWindow
        self.pageRetransmitTimeout = pageRetransmitTimeout
        self.eventRetransmitTimeout = eventRetransmitTimeout
        self.battery = battery
        self.speaksVersion1_1 = speaksVersion1_1
        self.ringDuration = ringDuration
        self.snoozeMinutes = snoozeMinutes
    }

    /// The same watch as a version-1 watch.
    public var version1Only: SimulatorConfiguration {
        var copy = self
        copy.speaksVersion1_1 = false
        return copy
    }

    /// The version-1.1 features this watch has (what EXTENSIONS may enable).
    var extensionFeatures: ExtensionFeatures {
        guard speaksVersion1_1 else { return [] }
        var features: ExtensionFeatures = []
        if capabilities.maxSmartWindow > 0 { features.insert(.smartWindows) }
        if capabilities.reportsAlarmAlerts { features.insert(.alarmAlerts) }
        return features
    }

    /// The commands HELLO lists.
    var commands: [CommandID] {
        guard speaksVersion1_1 else { return CommandID.allVersion1 }
        var commands = CommandID.allVersion1 + [.extensions]
        if capabilities.supportsRing { commands.append(.ring) }
        if capabilities.reportsAlarmAlerts { commands.append(.alarmAlert) }
        return commands
    }
}

extension DeviceInfoCapabilities {
    /// A 10-alarm watch with naps (rule 1), 64-byte remarks, live sleep, every monitor type, and
    /// protocol v1.1's smart windows up to 60 minutes, RING and alarm alerts.
    public static let simulatorDefault = DeviceInfoCapabilities(
        maxAlarms: 10, labelMaxBytes: 32, remarkMaxBytes: 64, statisticsRule: .withNap, supportsNaps: true,
        deletesSyncedRecords: false, supportsLiveSleep: true, monitorTypes: MonitorType.allCases,
        maxSmartWindow: 60, supportsRing: true, reportsAlarmAlerts: true)

    /// What a central learns about a watch of version 1 with these capabilities: none of v1.1.
    public var version1Only: DeviceInfoCapabilities {
        var copy = self
        copy.maxSmartWindow = 0
        copy.supportsRing = false
        copy.reportsAlarmAlerts = false
        return copy
    }
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

/// Which protocol the simulated watch speaks, as `--protocol`, TSGATEWAY_SIMULATOR_PROTOCOL and
/// the daemon's `protocol:` key spell it.
public enum SimulatedProtocol: String, Sendable, Hashable, CaseIterable {
    case version1 = "1.0"
    case version1_1 = "1.1"

    /// `1.0` (also `1`, `v1`) or `1.1` (also `v1.1`); nil for anything else.
    public init?(text: String) {
        switch text.lowercased() {
        case "1", "1.0", "v1", "v1.0": self = .version1
        case "1.1", "v1.1": self = .version1_1
        default: return nil
        }
    }

    public static let choices = "1.0 (version 1 only) or 1.1 (smart windows, RING, alarm alerts)"

    /// The default simulated watch speaking this protocol.
    public var configuration: SimulatorConfiguration {
        SimulatorConfiguration(speaksVersion1_1: self == .version1_1)
    }
}
