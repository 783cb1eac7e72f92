/// What a watch can do, as reported in its DEVICE_INFO.
public struct DeviceCapabilities: Sendable, Hashable, Codable {
    /// 0 means the watch has no alarms.
    public var maxAlarms: Int
    public var labelMaxBytes: Int
    /// 0 means the watch takes no alarm remarks.
    public var remarkMaxBytes: Int
    public var statisticsRule: StatisticsRule
    public var supportsNaps: Bool
    /// The watch deletes sleep records once the gateway has committed them.
    public var deletesSyncedRecords: Bool
    public var supportsLiveSleep: Bool
    /// Supported monitor types in type order.
    public var monitorTypes: [MonitorType]

    public init(
        maxAlarms: Int, labelMaxBytes: Int, remarkMaxBytes: Int, statisticsRule: StatisticsRule,
        supportsNaps: Bool, deletesSyncedRecords: Bool, supportsLiveSleep: Bool, monitorTypes: [MonitorType]
    ) {
        self.maxAlarms = maxAlarms
        self.labelMaxBytes = labelMaxBytes
        self.remarkMaxBytes = remarkMaxBytes
        self.statisticsRule = statisticsRule
        self.supportsNaps = supportsNaps
        self.deletesSyncedRecords = deletesSyncedRecords
        self.supportsLiveSleep = supportsLiveSleep
        self.monitorTypes = monitorTypes.sorted()
    }

    /// A watch without protocol v1: no alarms, monitors, sleep records or live stages.
    public static let none = DeviceCapabilities(maxAlarms: 0, labelMaxBytes: 0, remarkMaxBytes: 0, statisticsRule: .withNap,
                                                supportsNaps: false, deletesSyncedRecords: false, supportsLiveSleep: false, monitorTypes: [])

    public var alarmLimits: AlarmLimits {
        AlarmLimits(maxAlarms: maxAlarms, labelMaxBytes: labelMaxBytes, remarkMaxBytes: remarkMaxBytes)
    }
}

/// What a watch said about itself on connect: protocol v1's DEVICE_INFO (a watch without
/// protocol v1: its Device Information strings and `DeviceCapabilities.none`), the services GATT
/// discovery found, and its Device Information strings when it has that service.
public struct DeviceInfo: Sendable, Hashable, Codable {
    public var model: String
    public var firmware: String
    public var capabilities: DeviceCapabilities
    /// Nil when not known (a record from before services were discovered): protocol v1 only.
    public var services: ServiceSet?
    public var standard: StandardDeviceInformation?

    public init(model: String, firmware: String, capabilities: DeviceCapabilities, services: ServiceSet? = nil, standard: StandardDeviceInformation? = nil) {
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
        self.services = services
        self.standard = standard
    }

    /// The services, protocol v1 alone when unknown.
    public var offeredServices: ServiceSet { services ?? .protocolV1Only }
}

public enum BatteryState: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown, discharging, charging, full
}

public struct BatteryStatus: Sendable, Hashable, Codable {
    /// Percent, 0…100.
    public var level: UInt8
    public var state: BatteryState

    public init(level: UInt8, state: BatteryState) {
        self.level = level
        self.state = state
    }
}
