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

    public var alarmLimits: AlarmLimits {
        AlarmLimits(maxAlarms: maxAlarms, labelMaxBytes: labelMaxBytes, remarkMaxBytes: remarkMaxBytes)
    }
}

public struct DeviceInfo: Sendable, Hashable, Codable {
    public var model: String
    public var firmware: String
    public var capabilities: DeviceCapabilities

    public init(model: String, firmware: String, capabilities: DeviceCapabilities) {
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
    }
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
