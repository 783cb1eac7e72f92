/// What a watch can do, as data, whatever dialect it speaks. A front door asks this instead of
/// knowing dialects; a feature a watch lacks answers "not supported" at once.
public struct WatchCapabilities: Sendable, Hashable, Codable {
    /// The alarm table; nil: the watch has none.
    public var alarms: Alarms?
    /// The automatic-monitoring settings it has.
    public var monitorTypes: [MonitorType]
    /// How sleep records are fetched; nil: the watch hands over none.
    public var sleepSync: SleepSync?
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

        public init(maxCount: Int, labelMaxBytes: Int, remarkMaxBytes: Int = 0, snooze: Bool, maxSmartWindow: Int = 0) {
            self.maxCount = maxCount
            self.labelMaxBytes = labelMaxBytes
            self.remarkMaxBytes = remarkMaxBytes
            self.snooze = snooze
            self.maxSmartWindow = maxSmartWindow
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

    public init(alarms: Alarms? = nil, monitorTypes: [MonitorType] = [], sleepSync: SleepSync? = nil, liveStages: Bool = false,
                ring: Bool = false, alarmAlerts: Bool = false, battery: Bool = false, batteryNotifications: Bool = false,
                clock: Bool = false, heartRate: Bool = false, heartRateHistory: Bool = false) {
        self.alarms = alarms
        self.monitorTypes = monitorTypes
        self.sleepSync = sleepSync
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
}
