import TSDBus

// The members of `org.tsgateway.Gateway2` and `org.tsgateway.Watch2` by their names on the bus:
// the service exports these, the client calls and matches these, and the introspection in
// protocol-spec/dbus-api.md is checked against what the service exports.

/// The methods of Gateway2.
public enum GatewayMethod: String, Sendable, CaseIterable {
    case listWatches = "ListWatches"
}

/// The signals of Gateway2, with their arguments' names and types.
public enum GatewaySignal: String, Sendable, CaseIterable {
    case event = "Event"

    public var arguments: [(name: String, type: String)] {
        switch self {
        case .event: [("event_json", "s")]
        }
    }
}

/// The properties of Gateway2.
public enum GatewayProperty: String, Sendable, CaseIterable {
    case version = "Version"
    case apiVersion = "ApiVersion"
    case watches = "Watches"
    /// `ok`, or why the disk holding the database takes no writes: `full`, `read-only`.
    case storage = "Storage"
}

/// The methods of Watch2.
public enum WatchMethod: String, Sendable, CaseIterable {
    case getInfo = "GetInfo"
    case getAlarms = "GetAlarms"
    case setAlarms = "SetAlarms"
    case getMonitor = "GetMonitor"
    case setMonitor = "SetMonitor"
    case syncSleep = "SyncSleep"
    case syncTime = "SyncTime"
    case dailySleep = "DailySleep"
    case setSmartWake = "SetSmartWake"
    case getSmartWake = "GetSmartWake"
    case getSession = "GetSession"
}

/// The signals of Watch2, with their arguments' names and types.
public enum WatchSignal: String, Sendable, CaseIterable {
    case alarmsChanged = "AlarmsChanged"
    case sleepSynced = "SleepSynced"
    case syncProgress = "SyncProgress"
    case connectionChanged = "ConnectionChanged"
    case liveStage = "LiveStage"
    case sessionChanged = "SessionChanged"
    case heartRate = "HeartRate"
    case night = "Night"
    case smartWake = "SmartWake"

    public var arguments: [(name: String, type: String)] {
        switch self {
        case .alarmsChanged: [("alarms_json", "s"), ("origin", "s")]
        case .sleepSynced: [("fetched", "u"), ("stored", "u")]
        case .syncProgress: [("received", "u"), ("total", "u")]
        case .connectionChanged: [("connected", "b"), ("reason", "s")]
        case .liveStage: [("kind", "s"), ("stage", "s"), ("time_unix", "x")]
        case .sessionChanged: [("change", "s"), ("session_json", "s")]
        case .heartRate: [("sample", "a{sv}")]
        case .night: [("event", "s"), ("time_unix", "x"), ("details", "a{sv}")]
        case .smartWake: [("slot", "y"), ("alarm_time_unix", "x"), ("outcome", "s"), ("stage", "s")]
        }
    }
}

/// The keys of a watch's status: the properties of Watch2, which `GetInfo` and `ListWatches`
/// answer with too (unknown ones left out), and `HeartRate`, which only they carry.
public enum WatchStatusKey: String, Sendable, CaseIterable {
    case address = "Address"
    case name = "Name"
    case simulated = "Simulated"
    /// The dialect the gateway speaks with the watch (`v1`, `standard`, or a family's own).
    case dialect = "Dialect"
    case connected = "Connected"
    case syncing = "Syncing"
    case batteryLevel = "BatteryLevel"
    case batteryState = "BatteryState"
    case lastSync = "LastSync"
    case model = "Model"
    case firmware = "Firmware"
    case capabilities = "Capabilities"
    case lastError = "LastError"
    case sessionState = "SessionState"
    case services = "Services"
    case deviceInformation = "DeviceInformation"
    /// The last bpm while the link is up: not a property, as it changes every second.
    case heartRate = "HeartRate"

    public var signature: String {
        switch self {
        case .address, .name, .dialect, .batteryState, .model, .firmware, .lastError, .sessionState: "s"
        case .simulated, .connected, .syncing: "b"
        case .batteryLevel: "y"
        case .lastSync: "x"
        case .capabilities, .deviceInformation: "a{sv}"
        case .services: "as"
        case .heartRate: "q"
        }
    }

    /// The keys that are properties of Watch2, in the order the introspection lists them.
    public static var properties: [WatchStatusKey] { allCases.filter { $0 != .heartRate } }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// The value of a status key.
    public subscript(key: WatchStatusKey) -> DBusValue? {
        get { self[key.rawValue] }
        set { self[key.rawValue] = newValue }
    }
}

// The keys of the `a{sv}` dictionaries of methods: PascalCase, like every other D-Bus name of
// the API (protocol-spec/dbus-api.md, "Names").

/// The options of Watch2.SyncSleep.
public enum SyncSleepOption: String, Sendable, CaseIterable {
    case from = "From"
    case to = "To"
    case reconnects = "Reconnects"
}

/// The keys of Watch2.SyncSleep's result.
public enum SyncSleepResultKey: String, Sendable, CaseIterable {
    case fetched = "Fetched"
    case stored = "Stored"
    case deletedOnWatch = "DeletedOnWatch"
    case reconnects = "Reconnects"
    case enqueued = "Enqueued"
    case heartRateFetched = "HeartRateFetched"
    case heartRateStored = "HeartRateStored"
    case heartRateError = "HeartRateError"
}

/// The options of Watch2.DailySleep.
public enum DailySleepOption: String, Sendable, CaseIterable {
    case timeZone = "TimeZone"
    case rule = "Rule"
}
