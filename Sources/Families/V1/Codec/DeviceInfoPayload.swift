import TSModels

/// What a protocol v1 watch says it can do in DEVICE_INFO (wire-protocol.md §6), and for
/// protocol v1.1 in HELLO and EXTENSIONS (the last three properties; none of them on a version-1
/// watch): the wire's terms, which v1's central reads into `WatchCapabilities`.
public struct DeviceInfoCapabilities: Sendable, Hashable, Codable {
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
    /// The longest smart-wake window the watch takes on an alarm, in minutes; 0: none.
    public var maxSmartWindow: Int
    /// The watch rings on command (RING).
    public var supportsRing: Bool
    /// The watch reports its alarms ringing, dismissed, snoozed (ALARM_ALERT).
    public var reportsAlarmAlerts: Bool

    public init(
        maxAlarms: Int, labelMaxBytes: Int, remarkMaxBytes: Int, statisticsRule: StatisticsRule,
        supportsNaps: Bool, deletesSyncedRecords: Bool, supportsLiveSleep: Bool, monitorTypes: [MonitorType],
        maxSmartWindow: Int = 0, supportsRing: Bool = false, reportsAlarmAlerts: Bool = false
    ) {
        self.maxAlarms = maxAlarms
        self.labelMaxBytes = labelMaxBytes
        self.remarkMaxBytes = remarkMaxBytes
        self.statisticsRule = statisticsRule
        self.supportsNaps = supportsNaps
        self.deletesSyncedRecords = deletesSyncedRecords
        self.supportsLiveSleep = supportsLiveSleep
        self.monitorTypes = monitorTypes.sorted()
        self.maxSmartWindow = maxSmartWindow
        self.supportsRing = supportsRing
        self.reportsAlarmAlerts = reportsAlarmAlerts
    }

    enum CodingKeys: String, CodingKey {
        case maxAlarms, labelMaxBytes, remarkMaxBytes, statisticsRule, supportsNaps, deletesSyncedRecords, supportsLiveSleep, monitorTypes
        case maxSmartWindow, supportsRing, reportsAlarmAlerts
    }

    /// Records written before protocol v1.1 lack its three properties: a watch without them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            maxAlarms: try container.decode(Int.self, forKey: .maxAlarms),
            labelMaxBytes: try container.decode(Int.self, forKey: .labelMaxBytes),
            remarkMaxBytes: try container.decode(Int.self, forKey: .remarkMaxBytes),
            statisticsRule: try container.decode(StatisticsRule.self, forKey: .statisticsRule),
            supportsNaps: try container.decode(Bool.self, forKey: .supportsNaps),
            deletesSyncedRecords: try container.decode(Bool.self, forKey: .deletesSyncedRecords),
            supportsLiveSleep: try container.decode(Bool.self, forKey: .supportsLiveSleep),
            monitorTypes: try container.decode([MonitorType].self, forKey: .monitorTypes),
            maxSmartWindow: try container.decodeIfPresent(Int.self, forKey: .maxSmartWindow) ?? 0,
            supportsRing: try container.decodeIfPresent(Bool.self, forKey: .supportsRing) ?? false,
            reportsAlarmAlerts: try container.decodeIfPresent(Bool.self, forKey: .reportsAlarmAlerts) ?? false)
    }

    /// Nothing: no alarms, monitors, sleep records or live stages.
    public static let none = DeviceInfoCapabilities(maxAlarms: 0, labelMaxBytes: 0, remarkMaxBytes: 0, statisticsRule: .withNap,
                                                supportsNaps: false, deletesSyncedRecords: false, supportsLiveSleep: false, monitorTypes: [])

    public var alarmLimits: AlarmLimits {
        AlarmLimits(maxAlarms: maxAlarms, labelMaxBytes: labelMaxBytes, remarkMaxBytes: remarkMaxBytes, maxSmartWindow: maxSmartWindow)
    }
}

/// What a watch said about itself on connect: protocol v1's DEVICE_INFO (a watch without

/// DEVICE_INFO's response body (wire-protocol.md §6): the watch's model, firmware and capabilities.
public struct DeviceInfoPayload: Sendable, Hashable, Codable {
    public var model: String
    public var firmware: String
    public var capabilities: DeviceInfoCapabilities

    public init(model: String, firmware: String, capabilities: DeviceInfoCapabilities) {
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
    }
}
