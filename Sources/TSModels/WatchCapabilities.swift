/// What a watch can do, as data, whatever dialect it speaks: the one capability type above the
/// device layer, in `DeviceInfo`, the store, `info --json` and D-Bus's `Capabilities` alike. A
/// front door asks this instead of knowing dialects; a feature a watch lacks answers "not
/// supported" at once.
public struct WatchCapabilities: Sendable, Hashable, Codable {
    /// The alarm table; nil: the watch has none.
    public var alarms: Alarms?
    /// The automatic-monitoring settings it has.
    public var monitorTypes: [MonitorType]
    /// How sleep records are fetched; nil: the watch hands over none.
    public var sleepSync: SleepSync?
    /// The sleep statistics rule the watch's own summaries follow, when it names one (protocol
    /// v1's DEVICE_INFO); nil: it names none, and the gateway's rule applies.
    public var statisticsRule: StatisticsRule?
    /// The watch records naps as sleep of their own.
    public var naps: Bool
    /// Live sleep-stage events while the wearer sleeps.
    public var liveStages: Bool
    /// Rings an alarm on command (the gateway's smart wake).
    public var ring: Bool
    /// Reports an alarm ringing, dismissed or snoozed.
    public var alarmAlerts: Bool
    /// A battery reading; `batteryNotifications`: and changes as they happen.
    public var battery: Bool
    public var batteryNotifications: Bool
    /// The gateway sets the watch's clock.
    public var clock: Bool
    /// Heart-rate measurements as they are taken.
    public var heartRate: Bool
    /// The watch keeps the heart rate it measured on its own (every few minutes, manual
    /// readings) and hands it over for a range, so a night has heart rate even when the gateway
    /// was not connected.
    public var heartRateHistory: Bool

    public struct Alarms: Sendable, Hashable, Codable {
        public var maxCount: Int
        public var labelMaxBytes: Int
        public var remarkMaxBytes: Int
        public var snooze: Bool
        /// Longest smart window in minutes; 0: none.
        public var maxSmartWindow: Int
        /// The table can be read back; false: it can only be set (a Garmin watch's, whose alarms
        /// go in a settings file no client reads), and the gateway knows only what it wrote.
        public var readable: Bool

        public init(maxCount: Int, labelMaxBytes: Int, remarkMaxBytes: Int = 0, snooze: Bool, maxSmartWindow: Int = 0, readable: Bool = true) {
            self.maxCount = maxCount
            self.labelMaxBytes = labelMaxBytes
            self.remarkMaxBytes = remarkMaxBytes
            self.snooze = snooze
            self.maxSmartWindow = maxSmartWindow
            self.readable = readable
        }

        enum CodingKeys: String, CodingKey { case maxCount, labelMaxBytes, remarkMaxBytes, snooze, maxSmartWindow, readable }

        /// A shape stored before `readable` existed reads as readable: every watch's table was then.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(maxCount: try container.decode(Int.self, forKey: .maxCount), labelMaxBytes: try container.decode(Int.self, forKey: .labelMaxBytes),
                      remarkMaxBytes: try container.decodeIfPresent(Int.self, forKey: .remarkMaxBytes) ?? 0, snooze: try container.decode(Bool.self, forKey: .snooze),
                      maxSmartWindow: try container.decodeIfPresent(Int.self, forKey: .maxSmartWindow) ?? 0,
                      readable: try container.decodeIfPresent(Bool.self, forKey: .readable) ?? true)
        }
    }

    public struct SleepSync: Sendable, Hashable, Codable {
        /// How the records of a sync are chosen.
        public enum Selection: String, Sendable, Hashable, Codable {
            /// The gateway asks for records starting in a range [start, end).
            case range
            /// The watch hands over what it holds since the last sync it remembers.
            case watchCursor
        }

        public var selection: Selection
        /// The records arrive in parts (pages, days) with progress.
        public var paged: Bool
        /// The watch deletes records once they are synced.
        public var deletesSynced: Bool
        /// The watch takes an acknowledgement of what is durably stored (sent only after the commit).
        public var acknowledges: Bool

        public init(selection: Selection, paged: Bool, deletesSynced: Bool, acknowledges: Bool) {
            self.selection = selection
            self.paged = paged
            self.deletesSynced = deletesSynced
            self.acknowledges = acknowledges
        }
    }

    public init(alarms: Alarms? = nil, monitorTypes: [MonitorType] = [], sleepSync: SleepSync? = nil,
                statisticsRule: StatisticsRule? = nil, naps: Bool = false, liveStages: Bool = false,
                ring: Bool = false, alarmAlerts: Bool = false, battery: Bool = false, batteryNotifications: Bool = false,
                clock: Bool = false, heartRate: Bool = false, heartRateHistory: Bool = false) {
        self.alarms = alarms
        self.monitorTypes = monitorTypes.sorted()
        self.sleepSync = sleepSync
        self.statisticsRule = statisticsRule
        self.naps = naps
        self.liveStages = liveStages
        self.ring = ring
        self.alarmAlerts = alarmAlerts
        self.battery = battery
        self.batteryNotifications = batteryNotifications
        self.clock = clock
        self.heartRate = heartRate
        self.heartRateHistory = heartRateHistory
    }

    /// A watch nothing is known of yet (not connected).
    public static let nothing = WatchCapabilities()

    /// The alarm table's limits; a watch without one takes no alarm (`maxAlarms` 0).
    public var alarmLimits: AlarmLimits {
        AlarmLimits(maxAlarms: alarms?.maxCount ?? 0, labelMaxBytes: alarms?.labelMaxBytes ?? 0,
                    remarkMaxBytes: alarms?.remarkMaxBytes ?? 0, maxSmartWindow: alarms?.maxSmartWindow ?? 0)
    }

    /// How many alarms the watch holds; 0: it has no alarm table.
    public var maxAlarms: Int { alarms?.maxCount ?? 0 }
    /// The longest smart-wake window it takes on an alarm, in minutes; 0: none.
    public var maxSmartWindow: Int { alarms?.maxSmartWindow ?? 0 }

    enum CodingKeys: String, CodingKey {
        case alarms, monitorTypes, sleepSync, statisticsRule, naps, liveStages, ring, alarmAlerts, battery, batteryNotifications, clock
        case heartRate, heartRateHistory
    }

    /// A capability a record does not name is one the watch lacks, so records written before it
    /// existed still read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func flag(_ key: CodingKeys) throws -> Bool { try container.decodeIfPresent(Bool.self, forKey: key) ?? false }
        self.init(alarms: try container.decodeIfPresent(Alarms.self, forKey: .alarms),
                  monitorTypes: try container.decodeIfPresent([MonitorType].self, forKey: .monitorTypes) ?? [],
                  sleepSync: try container.decodeIfPresent(SleepSync.self, forKey: .sleepSync),
                  statisticsRule: try container.decodeIfPresent(StatisticsRule.self, forKey: .statisticsRule),
                  naps: try flag(.naps), liveStages: try flag(.liveStages), ring: try flag(.ring), alarmAlerts: try flag(.alarmAlerts),
                  battery: try flag(.battery), batteryNotifications: try flag(.batteryNotifications), clock: try flag(.clock),
                  heartRate: try flag(.heartRate), heartRateHistory: try flag(.heartRateHistory))
    }
}
