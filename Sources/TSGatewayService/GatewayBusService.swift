import Foundation
import Logging
import TSDBus
import TSDevice
import TSModels
import TSSleep
import TSStore

/// Exports the daemon on D-Bus: the root object (ObjectManager, Gateway1) and one Watch1 object
/// per watch; turns every `GatewayEvent` into its typed signal, Gateway1.Event(json) and
/// PropertiesChanged. Who may call what is the bus policy's business (udev/org.tsgateway.conf).
public final class GatewayBusService: Sendable {
    public let connection: BusConnection
    let supervisors: [WatchSupervisor]
    let logger: Logger
    public static let version = "0.2.0"

    public init(connection: BusConnection, supervisors: [WatchSupervisor], logger: Logger) {
        self.connection = connection
        self.supervisors = supervisors
        self.logger = logger
    }

    /// Exports every object, then takes the well-known name (so a client that sees the name sees the objects).
    public func start() async throws {
        connection.exportObjectManager(at: GatewayBusAPI.rootPath)
        try connection.export(path: GatewayBusAPI.rootPath, interfaces: [gatewayInterface()])
        for supervisor in supervisors {
            try connection.export(path: GatewayBusAPI.path(forWatch: supervisor.id), interfaces: [watchInterface(supervisor)])
        }
        do {
            try await connection.requestName(GatewayBusAPI.busName)
        } catch let error as BusError where error.name == "org.freedesktop.DBus.Error.AddressInUse" {
            throw BusError(name: error.name, message: "another process owns \(GatewayBusAPI.busName): is `tsgateway serve` already running? (systemctl status tsgateway)")
        }
    }

    /// Sends each event as D-Bus signals until the stream ends.
    public func forward(_ events: AsyncStream<GatewayEvent>) async {
        for await event in events {
            emit(event)
        }
    }

    func emit(_ event: GatewayEvent) {
        let path = GatewayBusAPI.path(forWatch: event.watch)
        let watchInterface = GatewayBusAPI.watchInterface
        do {
            try connection.emitSignal(path: GatewayBusAPI.rootPath, interface: GatewayBusAPI.gatewayInterface, member: "Event", [.string(event.json())])
            switch event.type {
            case .connection:
                let connected = event.connected ?? false
                try connection.emitSignal(path: path, interface: watchInterface, member: "ConnectionChanged", [.boolean(connected), .string(event.reason ?? "")])
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: ["Connected": .boolean(connected)])
            case .alarmsChanged:
                try connection.emitSignal(path: path, interface: watchInterface, member: "AlarmsChanged",
                                          [.string((try? GatewayBusAPI.json(event.alarms ?? [])) ?? "[]"), .string(event.origin ?? "")])
            case .sleepSynced:
                try connection.emitSignal(path: path, interface: watchInterface, member: "SleepSynced",
                                          [.int32(Int32(clamping: event.fetched ?? 0)), .int32(Int32(clamping: event.stored ?? 0))])
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: ["LastSync": .int64(Int64(event.time.timeIntervalSince1970))])
            case .battery:
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: ["BatteryLevel": .int32(Int32(clamping: event.battery ?? -1))])
            case .liveStage:
                try connection.emitSignal(path: path, interface: watchInterface, member: "LiveStage",
                                          [.string(event.liveKind ?? ""), .string(event.stage?.name ?? ""), .int64(Int64(event.time.timeIntervalSince1970))])
            case .fellAsleep, .wokeUp:
                break
            case .session:
                try connection.emitSignal(path: path, interface: watchInterface, member: "SessionChanged",
                                          [.string(event.change ?? ""), .string((try? GatewayBusAPI.json(event.session)) ?? "null")])
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: ["SessionState": .string(WatchStatus.sessionState(event.session))])
            }
        } catch {
            logger.warning("D-Bus signal for \(event.type.rawValue) not sent: \(error)")
        }
    }

    // MARK: Interfaces

    func gatewayInterface() -> DBusInterface {
        let supervisors = self.supervisors
        return DBusInterface(
            GatewayBusAPI.gatewayInterface,
            methods: [
                DBusMethod("ListWatches", out: "s", results: ["watches_json"]) { _, _ in
                    [.string(try GatewayBusAPI.json(supervisors.map(\.status)))]
                },
            ],
            properties: [
                DBusProperty("Version", "s") { .string(Self.version) },
                DBusProperty("Watches", "ao") { .array(element: "o", supervisors.map { .objectPath(GatewayBusAPI.path(forWatch: $0.id)) }) },
            ],
            signals: [(name: "Event", signature: "s")],
            signalArgumentNames: ["Event": ["event_json"]])
    }

    func watchInterface(_ supervisor: WatchSupervisor) -> DBusInterface {
        let connection = self.connection
        let path = GatewayBusAPI.path(forWatch: supervisor.id)
        func call(_ body: @escaping @Sendable ([DBusValue]) async throws -> [DBusValue]) -> @Sendable ([DBusValue], DBusCallInfo) async throws -> [DBusValue] {
            { arguments, _ in
                do { return try await body(arguments) } catch { throw GatewayBusAPI.busError(error) }
            }
        }
        @Sendable func invalid(_ message: String) -> BusError { BusError(name: GatewayBusAPI.ErrorName.invalidArguments.fullName, message: message) }
        return DBusInterface(
            GatewayBusAPI.watchInterface,
            methods: [
                DBusMethod("GetInfo", out: "s", results: ["status_json"], call { _ in
                    _ = try await supervisor.battery()
                    return [.string(try GatewayBusAPI.json(supervisor.status))]
                }),
                DBusMethod("GetAlarms", out: "s", results: ["alarms_json"], call { _ in
                    [.string(try GatewayBusAPI.json(try await supervisor.alarms()))]
                }),
                DBusMethod("SetAlarms", in: "s", names: ["alarms_json"], call { arguments in
                    try await supervisor.setAlarms(try GatewayBusAPI.decode([Alarm].self, json: arguments[0].stringValue ?? ""))
                    return []
                }),
                DBusMethod("GetMonitor", in: "s", out: "s", names: ["type"], results: ["config_json"], call { arguments in
                    let name = arguments[0].stringValue ?? ""
                    guard let type = MonitorType(name: name) else {
                        throw invalid("unknown monitor type \"\(name)\"; one of \(MonitorType.allCases.map(\.name).joined(separator: ", "))")
                    }
                    return [.string(try GatewayBusAPI.json(try await supervisor.monitorConfig(type)))]
                }),
                DBusMethod("SetMonitor", in: "s", names: ["config_json"], call { arguments in
                    try await supervisor.setMonitorConfig(try GatewayBusAPI.decode(MonitorConfig.self, json: arguments[0].stringValue ?? ""))
                    return []
                }),
                DBusMethod("SyncSleep", in: "xx", out: "s", names: ["from_unix", "to_unix"], results: ["result_json"], call { arguments in
                    let from = arguments[0].int64Value ?? 0, to = arguments[1].int64Value ?? 0
                    guard from >= 0, to >= 0, to == 0 || to > from else { throw invalid("SyncSleep needs 0 ≤ from < to (0 = since the last sync / up to now)") }
                    let report = try await supervisor.syncSleep(from: from == 0 ? nil : from, to: to == 0 ? nil : to) { progress in
                        try? connection.emitSignal(path: path, interface: GatewayBusAPI.watchInterface, member: "SyncProgress",
                                                   [.int32(Int32(clamping: progress.received)), .int32(Int32(clamping: progress.total))])
                    }
                    return [.string(try GatewayBusAPI.json(SyncResult(fetched: report.fetched, stored: report.stored,
                                                                      deletedOnWatch: report.deletedOnWatch, reconnects: report.reconnects)))]
                }),
                DBusMethod("SyncTime", call { _ in
                    try await supervisor.syncTime()
                    return []
                }),
                DBusMethod("DailySleep", in: "sssi", out: "s", names: ["first_date", "last_date", "time_zone", "rule"], results: ["report_json"], call { arguments in
                    let firstText = arguments[0].stringValue ?? "", lastText = arguments[1].stringValue ?? "", zoneName = arguments[2].stringValue ?? ""
                    let ruleNumber = arguments[3].int32Value ?? -1
                    var rule: StatisticsRule?
                    if ruleNumber >= 0 {
                        guard let chosen = StatisticsRule(rawValue: UInt8(clamping: ruleNumber)), ruleNumber <= 3 else { throw invalid("rule must be 0…3, or -1 for the configured or the watch's own; got \(ruleNumber)") }
                        rule = chosen
                    }
                    guard let first = LocalDate(firstText), let last = LocalDate(lastText), first <= last else {
                        throw invalid("DailySleep needs two dates YYYY-MM-DD, the first not after the second; got \"\(firstText)\", \"\(lastText)\"")
                    }
                    var zone: TimeZone?
                    if !zoneName.isEmpty {
                        guard let named = TimeZone(identifier: zoneName) else { throw invalid("unknown time zone \"\(zoneName)\"") }
                        zone = named
                    }
                    let (usedRule, days) = try await supervisor.dailySleep(first: first, last: last, timeZone: zone, rule: rule)
                    return [.string(try GatewayBusAPI.json(DailySleepReport(watch: supervisor.id, timeZone: (zone ?? supervisor.settings.timeZone).identifier,
                                                                            rule: Int(usedRule.rawValue), days: days)))]
                }),
                DBusMethod("GetSession", out: "s", results: ["session_json"], call { _ in
                    let session = try await supervisor.sessions.latest()
                    var stages: [LiveStageRecord] = []
                    if let session { stages = try await supervisor.store.liveStages(session: session.id) }
                    return [.string(try GatewayBusAPI.json(SessionReport(watch: supervisor.id, session: session, stages: stages)))]
                }),
            ],
            properties: [
                DBusProperty("Address", "s") { .string(supervisor.id) },
                DBusProperty("Name", "s") { .string(supervisor.entry.name ?? "") },
                DBusProperty("Simulated", "b") { .boolean(supervisor.entry.simulated) },
                DBusProperty("Connected", "b") { .boolean(supervisor.status.connected) },
                DBusProperty("Syncing", "b") { .boolean(supervisor.status.syncing) },
                DBusProperty("BatteryLevel", "i") { .int32(Int32(supervisor.status.batteryLevel ?? -1)) },
                DBusProperty("BatteryState", "s") { .string(supervisor.status.batteryState?.rawValue ?? "") },
                DBusProperty("LastSync", "x") { .int64(supervisor.status.lastSync.map { Int64($0.timeIntervalSince1970) } ?? 0) },
                DBusProperty("Model", "s") { .string(supervisor.status.info?.model ?? "") },
                DBusProperty("Firmware", "s") { .string(supervisor.status.info?.firmware ?? "") },
                DBusProperty("Capabilities", "a{sv}") { .properties(Self.capabilities(supervisor.status.info?.capabilities)) },
                DBusProperty("LastError", "s") { .string(supervisor.status.lastError ?? "") },
                DBusProperty("SessionState", "s") { .string(supervisor.status.sessionState) },
            ],
            signals: [
                (name: "AlarmsChanged", signature: "ss"),
                (name: "SleepSynced", signature: "ii"),
                (name: "SyncProgress", signature: "ii"),
                (name: "ConnectionChanged", signature: "bs"),
                (name: "LiveStage", signature: "ssx"),
                (name: "SessionChanged", signature: "ss"),
            ],
            signalArgumentNames: [
                "AlarmsChanged": ["alarms_json", "origin"],
                "SleepSynced": ["fetched", "stored"],
                "SyncProgress": ["received", "total"],
                "ConnectionChanged": ["connected", "reason"],
                "LiveStage": ["kind", "stage", "time_unix"],
                "SessionChanged": ["change", "session_json"],
            ])
    }

    static func capabilities(_ capabilities: DeviceCapabilities?) -> DBusProperties {
        guard let capabilities else { return [:] }
        return [
            "MaxAlarms": .uint32(UInt32(capabilities.maxAlarms)),
            "LabelMaxBytes": .uint32(UInt32(capabilities.labelMaxBytes)),
            "RemarkMaxBytes": .uint32(UInt32(capabilities.remarkMaxBytes)),
            "StatisticsRule": .byte(capabilities.statisticsRule.rawValue),
            "SupportsNaps": .boolean(capabilities.supportsNaps),
            "DeletesSyncedRecords": .boolean(capabilities.deletesSyncedRecords),
            "SupportsLiveSleep": .boolean(capabilities.supportsLiveSleep),
            "MonitorTypes": .strings(capabilities.monitorTypes.map(\.name)),
        ]
    }
}
