import Foundation
import TSDBus
import TSDevice
import TSModels
import TSStore
import TSWatchService

/// Names and encodings of the daemon's D-Bus API, version 3 (protocol-spec/dbus-api.md). Flat
/// state, options and results are typed (properties, `a{sv}`); documents with nested structure
/// (alarm tables, monitor configs, daily reports, sessions, events) travel as JSON strings in
/// the one shape the CLI's `--json` output and MQTT use.
public enum GatewayBusAPI {
    /// Raised with every change a client can see. The interface names carry the version of the
    /// methods' and signals' signatures, raised when those change (last at API version 2).
    public static let apiVersion: UInt32 = 3
    public static let busName = "org.tsgateway"
    public static let rootPath = "/org/tsgateway"
    public static let gatewayInterface = "org.tsgateway.Gateway2"
    public static let watchInterface = "org.tsgateway.Watch2"
    public static let errorPrefix = "org.tsgateway.Error."

    /// `/org/tsgateway/watch_AABBCCDDEEFF` for the watch AA:BB:CC:DD:EE:FF (a `WatchID`'s text).
    public static func path(forWatch id: WatchID) -> String {
        rootPath + "/watch_" + id.rawValue.filter { $0.isHexDigit }
    }

    // MARK: Errors

    /// `org.tsgateway.Error.<category>`: the error category is the name, so a client gets the
    /// same category (and the CLI the same exit status) as the daemon had.
    public static func busError(_ error: any Error) -> BusError {
        if let busError = error as? BusError { return busError }
        let category = ErrorCategory.of(error)
        let message = switch error {
        case is DecodingError: "the JSON argument is not valid: \(JSONErrorText.describe(error))"
        case is CancellationError: "the gateway is stopping"
        default: String(describing: error)
        }
        return BusError(name: errorPrefix + category.rawValue, message: message)
    }

    /// The category of an error a call to the daemon failed with.
    public static func failure(_ error: BusError) -> CategorizedFailure {
        if error.name.hasPrefix(errorPrefix), let category = ErrorCategory(rawValue: String(error.name.dropFirst(errorPrefix.count))) {
            return CategorizedFailure(category, error.message)
        }
        switch error.name {
        case BusError.accessDenied:
            return CategorizedFailure(.permission, "tsgateway serve refused the change: only root and members of the tsgateway group may change the watch "
                                      + "(sudo usermod -aG tsgateway $USER, then log in again; or run with sudo)")
        case BusError.noReply, BusError.timeout:
            return CategorizedFailure(.timeout, "tsgateway serve did not answer in time (\(error.message))")
        case BusError.serviceUnknown, BusError.nameHasNoOwner, BusError.disconnected:
            return CategorizedFailure(.unavailable, "tsgateway serve went away (\(error.message)); check `systemctl status tsgateway`")
        default:
            return CategorizedFailure(.failed, error.message.isEmpty ? error.name : error.message)
        }
    }

    public static func invalid(_ message: String) -> BusError {
        BusError(name: errorPrefix + ErrorCategory.invalidInput.rawValue, message: message)
    }

    // MARK: Typed values

    /// A watch's status as `a{sv}`: the Watch2 property names, unknown values left out.
    public static func dictionary(_ status: WatchStatus) -> DBusProperties {
        var values: DBusProperties = [:]
        values[.address] = .string(status.id.rawValue)
        values[.simulated] = .boolean(status.simulated)
        values[.dialect] = (status.dialect ?? status.info?.spokenDialect).map { .string($0.rawValue) }
        values[.connected] = .boolean(status.connected)
        values[.syncing] = .boolean(status.syncing)
        values[.capabilities] = .properties(status.info.map { capabilities($0.capabilities) } ?? [:])
        values[.name] = status.name.map(DBusValue.string)
        values[.batteryLevel] = status.batteryLevel.map { .byte(UInt8(clamping: $0)) }
        values[.batteryState] = status.batteryState.map { .string($0.rawValue) }
        values[.lastSync] = status.lastSync.map { .int64(Int64($0.timeIntervalSince1970)) }
        values[.model] = status.info.map { .string($0.model) }
        values[.firmware] = status.info.map { .string($0.firmware) }
        values[.lastError] = status.lastError.map(DBusValue.string)
        values[.sessionState] = status.sessionState.map { .string($0.rawValue) }
        values[.services] = status.info.map { .strings($0.offeredServices.sorted.map(\.rawValue)) }
        values[.deviceInformation] = status.info.map { .properties(deviceInformation($0.standard ?? StandardDeviceInformation())) }
        values[.heartRate] = status.heartRate.map { .uint16(UInt16(clamping: $0)) }
        return values
    }

    /// A heart-rate sample as the HeartRate signal carries it: `Bpm` (q), `SensorContact` (s),
    /// `EnergyExpended` (q, kJ; absent when the watch sent none), `RRIntervals` (aq, 1/1024 s),
    /// `Time` (x, milliseconds since 1970 when the gateway received it).
    public static func dictionary(_ sample: HeartRateSample) -> DBusProperties {
        var values: DBusProperties = [
            "Bpm": .uint16(UInt16(clamping: sample.bpm)), "SensorContact": .string(sample.sensorContact.rawValue),
            "RRIntervals": .array(element: "q", sample.rrIntervals.map { .uint16(UInt16(clamping: $0)) }),
            "Time": .int64(Int64((sample.time.timeIntervalSince1970 * 1000).rounded(.down))),
        ]
        values["EnergyExpended"] = sample.energyExpended.map { .uint16(UInt16(clamping: $0)) }
        return values
    }

    /// The Night signal's details: `Stage` (s) and `AlarmSlot` (y) where the event has them.
    public static func details(_ night: NightEvent) -> DBusProperties {
        var details: DBusProperties = [:]
        details["Stage"] = night.stage.map { .string($0.name) }
        details["AlarmSlot"] = night.alarmSlot.map { .byte(UInt8(clamping: $0)) }
        return details
    }

    /// The night's event back from the Night signal's name and details.
    public static func nightEvent(_ name: NightEvent.Name, details: DBusProperties) -> NightEvent {
        NightEvent(name, stage: details["Stage"]?.stringValue.flatMap(SleepStage.init(name:)), alarmSlot: details["AlarmSlot"]?.byteValue.map(Int.init))
    }

    /// The sample back from the HeartRate signal; nil when a required key is missing or of another type.
    public static func heartRateSample(_ values: DBusProperties) -> HeartRateSample? {
        guard let bpm = values["Bpm"]?.uint16Value, let contact = values["SensorContact"]?.stringValue.flatMap(SensorContact.init(rawValue:)),
              let time = values["Time"]?.int64Value else { return nil }
        let intervals = values["RRIntervals"]?.arrayValue?.compactMap(\.uint16Value).map(Int.init) ?? []
        return HeartRateSample(time: Date(timeIntervalSince1970: Double(time) / 1000), bpm: Int(bpm), sensorContact: contact,
                               energyExpended: values["EnergyExpended"]?.uint16Value.map(Int.init), rrIntervals: intervals)
    }

    /// The status back from `a{sv}`; nil when a required key is missing or of another type.
    public static func status(_ values: DBusProperties) -> WatchStatus? {
        guard let id = values[.address]?.stringValue.flatMap(WatchID.init), let simulated = values[.simulated]?.boolValue else { return nil }
        let dialect = values[.dialect]?.stringValue.map(Dialect.init(rawValue:))
        var status = WatchStatus(id: id, name: values[.name]?.stringValue, simulated: simulated, dialect: dialect)
        status.connected = values[.connected]?.boolValue ?? false
        status.syncing = values[.syncing]?.boolValue ?? false
        status.batteryLevel = values[.batteryLevel]?.byteValue.map(Int.init)
        status.batteryState = values[.batteryState]?.stringValue.flatMap(BatteryState.init(rawValue:))
        status.lastSync = values[.lastSync]?.int64Value.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        if let model = values[.model]?.stringValue, let firmware = values[.firmware]?.stringValue,
           let capabilities = values[.capabilities]?.propertiesValue.flatMap(capabilities) {
            let services = values[.services]?.stringArrayValue.map { ServiceSet($0.compactMap(WatchService.init(rawValue:))) }
            let standard = values[.deviceInformation]?.propertiesValue.map(deviceInformation)
            status.info = DeviceInfo(model: model, firmware: firmware, capabilities: capabilities, services: services,
                                     standard: standard?.isEmpty == false || services?.contains(.deviceInformation) == true ? standard : nil,
                                     dialect: dialect)
        }
        status.lastError = values[.lastError]?.stringValue
        status.sessionState = values[.sessionState]?.stringValue.flatMap(WatchStatus.SessionState.init(rawValue:))
        status.heartRate = values[.heartRate]?.uint16Value.map(Int.init)
        return status
    }

    /// The Device Information strings the watch has, by D-Bus key.
    public static var deviceInformationKeys: [(key: String, path: WritableKeyPath<StandardDeviceInformation, String?>)] {
        [("Manufacturer", \.manufacturer), ("Model", \.model), ("SerialNumber", \.serialNumber),
         ("HardwareRevision", \.hardwareRevision), ("FirmwareRevision", \.firmwareRevision), ("SoftwareRevision", \.softwareRevision)]
    }

    public static func deviceInformation(_ information: StandardDeviceInformation) -> DBusProperties {
        var values: DBusProperties = [:]
        for (key, path) in deviceInformationKeys { values[key] = information[keyPath: path].map(DBusValue.string) }
        return values
    }

    public static func deviceInformation(_ values: DBusProperties) -> StandardDeviceInformation {
        var information = StandardDeviceInformation()
        for (key, path) in deviceInformationKeys { information[keyPath: path] = values[key]?.stringValue }
        return information
    }

    /// `WatchCapabilities` as D-Bus properties: its JSON keys with a capital (`Alarms`,
    /// `SleepSync` nested, each absent when the watch has none; `StatisticsRule` absent when it
    /// names none), so `info --json`'s `capabilities` and this say the same in the same words.
    public static func capabilities(_ capabilities: WatchCapabilities) -> DBusProperties {
        var values: DBusProperties = [
            "MonitorTypes": .strings(capabilities.monitorTypes.map(\.name)),
            "Naps": .boolean(capabilities.naps), "LiveStages": .boolean(capabilities.liveStages), "Ring": .boolean(capabilities.ring),
            "AlarmAlerts": .boolean(capabilities.alarmAlerts), "Battery": .boolean(capabilities.battery),
            "BatteryNotifications": .boolean(capabilities.batteryNotifications), "Clock": .boolean(capabilities.clock),
            "HeartRate": .boolean(capabilities.heartRate), "HeartRateHistory": .boolean(capabilities.heartRateHistory),
        ]
        if let alarms = capabilities.alarms {
            values["Alarms"] = .properties([
                "MaxCount": .uint32(UInt32(clamping: alarms.maxCount)), "LabelMaxBytes": .uint32(UInt32(clamping: alarms.labelMaxBytes)),
                "RemarkMaxBytes": .uint32(UInt32(clamping: alarms.remarkMaxBytes)), "Snooze": .boolean(alarms.snooze),
                "MaxSmartWindow": .uint32(UInt32(clamping: alarms.maxSmartWindow)), "Readable": .boolean(alarms.readable),
            ])
        }
        if let sync = capabilities.sleepSync {
            values["SleepSync"] = .properties([
                "Selection": .string(sync.selection.rawValue), "Paged": .boolean(sync.paged),
                "DeletesSynced": .boolean(sync.deletesSynced), "Acknowledges": .boolean(sync.acknowledges),
            ])
        }
        if let rule = capabilities.statisticsRule { values["StatisticsRule"] = .byte(rule.rawValue) }
        return values
    }

    /// The capabilities in `values`; nil for an empty dictionary (the watch was not reached yet).
    /// A key left out is a capability the watch lacks.
    public static func capabilities(_ values: DBusProperties) -> WatchCapabilities? {
        guard !values.isEmpty else { return nil }
        func flag(_ key: String, in values: DBusProperties) -> Bool { values[key]?.boolValue ?? false }
        let alarms = values["Alarms"]?.propertiesValue.map { alarms in
            WatchCapabilities.Alarms(maxCount: Int(alarms["MaxCount"]?.uint32Value ?? 0), labelMaxBytes: Int(alarms["LabelMaxBytes"]?.uint32Value ?? 0),
                                     remarkMaxBytes: Int(alarms["RemarkMaxBytes"]?.uint32Value ?? 0), snooze: flag("Snooze", in: alarms),
                                     maxSmartWindow: Int(alarms["MaxSmartWindow"]?.uint32Value ?? 0),
                                     // A daemon before `Readable` existed served readable tables only.
                                     readable: alarms["Readable"]?.boolValue ?? true)
        }
        let sleepSync = values["SleepSync"]?.propertiesValue.flatMap { sync -> WatchCapabilities.SleepSync? in
            guard let selection = sync["Selection"]?.stringValue.flatMap(WatchCapabilities.SleepSync.Selection.init(rawValue:)) else { return nil }
            return .init(selection: selection, paged: flag("Paged", in: sync), deletesSynced: flag("DeletesSynced", in: sync),
                         acknowledges: flag("Acknowledges", in: sync))
        }
        return WatchCapabilities(
            alarms: alarms, monitorTypes: (values["MonitorTypes"]?.stringArrayValue ?? []).compactMap(MonitorType.init(name:)), sleepSync: sleepSync,
            statisticsRule: values["StatisticsRule"]?.byteValue.flatMap(StatisticsRule.init(rawValue:)), naps: flag("Naps", in: values),
            liveStages: flag("LiveStages", in: values), ring: flag("Ring", in: values), alarmAlerts: flag("AlarmAlerts", in: values),
            battery: flag("Battery", in: values), batteryNotifications: flag("BatteryNotifications", in: values), clock: flag("Clock", in: values),
            heartRate: flag("HeartRate", in: values), heartRateHistory: flag("HeartRateHistory", in: values))
    }

    /// SyncSleep's options: `From`, `To` (x, Unix seconds), `Reconnects` (u); each may be left out.
    public static func syncOptions(_ request: SyncRequest) -> DBusProperties {
        var options: DBusProperties = [:]
        options[SyncSleepOption.from.rawValue] = request.from.map(DBusValue.int64)
        options[SyncSleepOption.to.rawValue] = request.to.map(DBusValue.int64)
        options[SyncSleepOption.reconnects.rawValue] = request.reconnects.map { .uint32(UInt32(clamping: $0)) }
        return options
    }

    public static func syncRequest(_ options: DBusProperties) throws(BusError) -> SyncRequest {
        var request = SyncRequest()
        for (key, value) in options {
            switch (SyncSleepOption(rawValue: key), value) {
            case let (.from?, .int64(from)): request.from = from
            case let (.to?, .int64(to)): request.to = to
            case let (.reconnects?, .uint32(count)): request.reconnects = Int(count)
            default: throw invalid("SyncSleep option \"\(key)\" of type \(value.signature) is not known; options are From (x), To (x), Reconnects (u)")
            }
        }
        if let from = request.from, from < 0 { throw invalid("SyncSleep: from must not be negative; got \(from)") }
        if let from = request.from, let to = request.to, to <= from { throw invalid("SyncSleep: to (\(to)) must be after from (\(from))") }
        if let reconnects = request.reconnects, reconnects > 100 { throw invalid("SyncSleep: reconnects must be 0…100; got \(reconnects)") }
        return request
    }

    /// SyncSleep's result: `Fetched`, `Stored`, `DeletedOnWatch`, `Reconnects`, `Enqueued`,
    /// `HeartRateFetched`, `HeartRateStored` (u), and `HeartRateError` (s) when the watch refused its heart-rate history.
    public static func dictionary(_ result: SleepSyncReport) -> DBusProperties {
        let counts: [SyncSleepResultKey: Int] = [.fetched: result.fetched, .stored: result.stored, .deletedOnWatch: result.deletedOnWatch,
                                                 .reconnects: result.reconnects, .enqueued: result.enqueued,
                                                 .heartRateFetched: result.heartRateFetched, .heartRateStored: result.heartRateStored]
        var values = Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, DBusValue.uint32(UInt32(clamping: $0.value))) })
        values[SyncSleepResultKey.heartRateError.rawValue] = result.heartRateError.map(DBusValue.string)
        return values
    }

    public static func syncResult(_ values: DBusProperties) -> SleepSyncReport? {
        func count(_ key: SyncSleepResultKey) -> Int? { values[key.rawValue]?.uint32Value.map(Int.init) }
        guard let fetched = count(.fetched), let stored = count(.stored), let deleted = count(.deletedOnWatch),
              let reconnects = count(.reconnects) else { return nil }
        return SleepSyncReport(fetched: fetched, stored: stored, deletedOnWatch: deleted, reconnects: reconnects, enqueued: count(.enqueued) ?? 0,
                          heartRateFetched: count(.heartRateFetched) ?? 0, heartRateStored: count(.heartRateStored) ?? 0,
                          heartRateError: values[SyncSleepResultKey.heartRateError.rawValue]?.stringValue)
    }

    /// DailySleep's options: `TimeZone` (s, an IANA name), `Rule` (y, 0–3); each may be left out.
    public static func dailySleepOptions(timeZone: TimeZone?, rule: StatisticsRule?) -> DBusProperties {
        var options: DBusProperties = [:]
        options[DailySleepOption.timeZone.rawValue] = timeZone.map { .string($0.identifier) }
        options[DailySleepOption.rule.rawValue] = rule.map { .byte($0.rawValue) }
        return options
    }

    public static func dailySleepOptions(_ options: DBusProperties) throws(BusError) -> (timeZone: TimeZone?, rule: StatisticsRule?) {
        var zone: TimeZone?, rule: StatisticsRule?
        for (key, value) in options {
            switch (DailySleepOption(rawValue: key), value) {
            case let (.timeZone?, .string(name)):
                guard let named = TimeZone(identifier: name) else { throw invalid("unknown time zone \"\(name)\"; use an IANA name such as Europe/Berlin") }
                zone = named
            case let (.rule?, .byte(number)):
                guard let chosen = StatisticsRule(rawValue: number) else { throw invalid("rule must be 0…3; got \(number)") }
                rule = chosen
            default: throw invalid("DailySleep option \"\(key)\" of type \(value.signature) is not known; options are TimeZone (s), Rule (y)")
            }
        }
        return (zone, rule)
    }

    // MARK: JSON

    public static let encoder = JSONCoding.encoder(iso8601Dates: true)

    public static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public static func decode<T: Decodable>(_ type: T.Type, json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(json.utf8))
    }
}

/// GetSession's answer: the open or latest session and its stage events.
public struct SessionReport: Sendable, Codable, Hashable {
    public var watch: WatchID
    public var session: LiveSleepSession?
    public var stages: [LiveStageRecord]

    public init(watch: WatchID, session: LiveSleepSession?, stages: [LiveStageRecord]) {
        self.watch = watch
        self.session = session
        self.stages = stages
    }
}
