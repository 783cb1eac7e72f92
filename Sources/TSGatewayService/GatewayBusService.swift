import Foundation
import Logging
import TSDBus
import TSGatewayAPI
import TSDevice
import TSModels
import TSSleep
import TSStore
import TSWatchService

/// Exports the daemon on D-Bus: the root object (ObjectManager, Gateway2) and one Watch2 object
/// per watch; turns every `GatewayEvent` into its typed signal, Gateway2.Event(json) and
/// PropertiesChanged. Who may call what is the bus policy's business (udev/org.tsgateway.conf).
public final class GatewayBusService: Sendable {
    public let connection: BusConnection
    let supervisors: [WatchSupervisor]
    /// Whether the disk holding the database takes writes (Gateway2's `Storage`); nil: not watched.
    let storage: StorageHealth?
    let logger: Logger

    public init(connection: BusConnection, supervisors: [WatchSupervisor], storage: StorageHealth? = nil, logger: Logger) {
        self.connection = connection
        self.supervisors = supervisors
        self.storage = storage
        self.logger = logger
    }

    /// Gateway2's `Storage`: `ok`, or why the disk takes no writes (`full`, `read-only`).
    static func storageProperty(_ condition: StorageCondition?) -> DBusValue { .string(condition?.rawValue ?? "ok") }

    /// Exports every object, then takes the well-known name (so a client that sees the name sees the objects).
    public func start() async throws {
        connection.exportObjectManager(at: GatewayBusAPI.rootPath)
        try connection.export(path: GatewayBusAPI.rootPath, interfaces: [gatewayInterface()])
        for supervisor in supervisors {
            try connection.export(path: GatewayBusAPI.path(forWatch: supervisor.id), interfaces: [watchInterface(supervisor)])
        }
        do {
            try await connection.requestName(GatewayBusAPI.busName)
        } catch let error as BusError where error.name == BusError.addressInUse {
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
            try connection.emitSignal(path: GatewayBusAPI.rootPath, interface: GatewayBusAPI.gatewayInterface, member: GatewaySignal.event.rawValue, [.string(event.json())])
            switch event.kind {
            case let .connection(connected, reason):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.connectionChanged.rawValue, [.boolean(connected), .string(reason ?? "")])
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: [WatchStatusKey.connected.rawValue: .boolean(connected)])
            case let .alarmsChanged(alarms, origin):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.alarmsChanged.rawValue, [.string(try GatewayBusAPI.json(alarms)), .string(origin.rawValue)])
            case let .sleepSynced(fetched, stored):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.sleepSynced.rawValue,
                                          [.uint32(UInt32(clamping: fetched)), .uint32(UInt32(clamping: stored))])
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: [WatchStatusKey.lastSync.rawValue: .int64(Int64(event.time.timeIntervalSince1970))])
            case let .battery(level):
                try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: [WatchStatusKey.batteryLevel.rawValue: .byte(UInt8(clamping: level))])
            case let .night(night):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.night.rawValue,
                                          [.string(night.name.rawValue), .int64(Int64(event.time.timeIntervalSince1970)), .properties(GatewayBusAPI.details(night))])
            case let .smartWake(slot, alarmTime, outcome, stage):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.smartWake.rawValue,
                                          [.byte(UInt8(clamping: slot)), .int64(Int64(alarmTime.timeIntervalSince1970)), .string(outcome.rawValue), .string(stage?.name ?? "")])
            case let .heartRate(sample):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.heartRate.rawValue, [.properties(GatewayBusAPI.dictionary(sample))])
            case let .liveStage(stage, kind):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.liveStage.rawValue,
                                          [.string(kind.rawValue), .string(stage.name), .int64(Int64(event.time.timeIntervalSince1970))])
            case .fellAsleep, .wokeUp, .clock:
                break
            case let .storage(condition, _):
                // Said for every watch; the gateway's property changes once.
                if event.watch == supervisors.first?.id {
                    try connection.emitPropertiesChanged(path: GatewayBusAPI.rootPath, interface: GatewayBusAPI.gatewayInterface,
                                                         changed: [GatewayProperty.storage.rawValue: Self.storageProperty(condition)])
                }
            case let .session(change, session, _):
                try connection.emitSignal(path: path, interface: watchInterface, member: WatchSignal.sessionChanged.rawValue,
                                          [.string(change.rawValue), .string(try GatewayBusAPI.json(session))])
                if let state = WatchStatus.sessionState(session) {
                    try connection.emitPropertiesChanged(path: path, interface: watchInterface, changed: [WatchStatusKey.sessionState.rawValue: .string(state.rawValue)])
                }
            }
        } catch {
            logger.warning("D-Bus signal for \(event.type.rawValue) not sent: \(error)")
        }
    }

    // MARK: Interfaces

    func gatewayInterface() -> DBusInterface {
        let supervisors = self.supervisors
        let storage = self.storage
        return DBusInterface(
            GatewayBusAPI.gatewayInterface,
            methods: [
                DBusMethod(GatewayMethod.listWatches.rawValue, out: "aa{sv}", results: ["watches"]) { _, _ in
                    [.array(element: "a{sv}", supervisors.map { .properties(GatewayBusAPI.dictionary($0.status)) })]
                },
            ],
            properties: [
                DBusProperty(GatewayProperty.version.rawValue, "s") { .string(GatewayVersion.current) },
                DBusProperty(GatewayProperty.apiVersion.rawValue, "u") { .uint32(GatewayBusAPI.apiVersion) },
                DBusProperty(GatewayProperty.watches.rawValue, "ao") { .array(element: "o", supervisors.map { .objectPath(GatewayBusAPI.path(forWatch: $0.id)) }) },
                DBusProperty(GatewayProperty.storage.rawValue, "s") { Self.storageProperty(storage?.condition) },
            ],
            signals: GatewaySignal.allCases.map { (name: $0.rawValue, signature: $0.arguments.map(\.type).joined()) },
            signalArgumentNames: Dictionary(uniqueKeysWithValues: GatewaySignal.allCases.map { ($0.rawValue, $0.arguments.map(\.name)) }))
    }

    func watchInterface(_ supervisor: WatchSupervisor) -> DBusInterface {
        let connection = self.connection
        // The operations go through the front doors' protocol, as the CLI's in-process door does.
        let door: any WatchAccess = supervisor
        let path = GatewayBusAPI.path(forWatch: supervisor.id)
        func call(_ body: @escaping @Sendable ([DBusValue]) async throws -> [DBusValue]) -> @Sendable ([DBusValue], DBusCallInfo) async throws -> [DBusValue] {
            { arguments, _ in
                do { return try await body(arguments) } catch { throw GatewayBusAPI.busError(error) }
            }
        }
        /// One property of the status, read from the same dictionary GetInfo answers with.
        func property(_ key: WatchStatusKey) -> DBusProperty {
            DBusProperty(key.rawValue, key.signature, optional: { GatewayBusAPI.dictionary(supervisor.status)[key] })
        }
        return DBusInterface(
            GatewayBusAPI.watchInterface,
            methods: [
                DBusMethod(WatchMethod.getInfo.rawValue, out: "a{sv}", results: ["status"], call { _ in
                    _ = try await door.battery()
                    return [.properties(GatewayBusAPI.dictionary(supervisor.status))]
                }),
                DBusMethod(WatchMethod.getAlarms.rawValue, out: "s", results: ["alarms_json"], call { _ in
                    [.string(try GatewayBusAPI.json(try await door.alarms()))]
                }),
                DBusMethod(WatchMethod.setAlarms.rawValue, in: "s", names: ["alarms_json"], call { arguments in
                    try await door.setAlarms(try AlarmJSON.table(from: (arguments[0].stringValue ?? "").utf8))
                    return []
                }),
                DBusMethod(WatchMethod.getMonitor.rawValue, in: "s", out: "s", names: ["type"], results: ["config_json"], call { arguments in
                    let name = arguments[0].stringValue ?? ""
                    guard let type = MonitorType(name: name) else {
                        throw GatewayBusAPI.invalid("unknown monitor type \"\(name)\"; one of \(MonitorType.allCases.map(\.name).joined(separator: ", "))")
                    }
                    return [.string(try GatewayBusAPI.json(try await door.monitorConfig(type)))]
                }),
                DBusMethod(WatchMethod.setMonitor.rawValue, in: "s", names: ["config_json"], call { arguments in
                    try await door.setMonitorConfig(try GatewayBusAPI.decode(MonitorConfig.self, json: arguments[0].stringValue ?? ""))
                    return []
                }),
                DBusMethod(WatchMethod.syncSleep.rawValue, in: "a{sv}", out: "a{sv}", names: ["options"], results: ["result"], call { arguments in
                    let request = try GatewayBusAPI.syncRequest(arguments[0].propertiesValue ?? [:])
                    let report = try await door.syncSleep(request) { progress in
                        try? connection.emitSignal(path: path, interface: GatewayBusAPI.watchInterface, member: WatchSignal.syncProgress.rawValue,
                                                   [.uint32(UInt32(clamping: progress.received)), .uint32(UInt32(clamping: progress.total))])
                    }
                    return [.properties(GatewayBusAPI.dictionary(report))]
                }),
                DBusMethod(WatchMethod.syncTime.rawValue, call { _ in
                    try await door.syncTime()
                    return []
                }),
                DBusMethod(WatchMethod.dailySleep.rawValue, in: "ssa{sv}", out: "s", names: ["first_date", "last_date", "options"], results: ["report_json"], call { arguments in
                    let firstText = arguments[0].stringValue ?? "", lastText = arguments[1].stringValue ?? ""
                    guard let first = LocalDate(firstText), let last = LocalDate(lastText), first <= last else {
                        throw GatewayBusAPI.invalid("DailySleep needs two dates YYYY-MM-DD, the first not after the second; got \"\(firstText)\", \"\(lastText)\"")
                    }
                    let (zone, rule) = try GatewayBusAPI.dailySleepOptions(arguments[2].propertiesValue ?? [:])
                    return [.string(try GatewayBusAPI.json(try await door.dailySleep(first: first, last: last, timeZone: zone, rule: rule)))]
                }),
                DBusMethod(WatchMethod.setSmartWake.rawValue, in: "yq", names: ["slot", "minutes"], call { arguments in
                    let slot = Int(arguments[0].byteValue ?? 0), minutes = Int(arguments[1].uint16Value ?? 0)
                    guard minutes <= Alarm.maxGatewaySmartWindow else {
                        throw GatewayBusAPI.invalid("a gateway smart window is at most \(Alarm.maxGatewaySmartWindow) minutes (the watch's RING covers no more), got \(minutes)")
                    }
                    try await supervisor.setSmartWakeWindow(slot: slot, minutes: minutes)
                    return []
                }),
                DBusMethod(WatchMethod.getSmartWake.rawValue, out: "a{yq}", results: ["windows"], call { _ in
                    let windows = try await supervisor.smartWakeWindows()
                    return [.dictionary(key: "y", value: "q", windows.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .byte(UInt8(clamping: $0.key)), value: .uint16(UInt16(clamping: $0.value))) })]
                }),
                DBusMethod(WatchMethod.getSession.rawValue, out: "s", results: ["session_json"], call { _ in
                    let session = try await supervisor.sessions.latest()
                    var stages: [LiveStageRecord] = []
                    if let session { stages = try await supervisor.store.liveStages(session: session.id) }
                    return [.string(try GatewayBusAPI.json(SessionReport(watch: supervisor.id, session: session, stages: stages)))]
                }),
            ],
            properties: WatchStatusKey.properties.map(property),
            signals: WatchSignal.allCases.map { (name: $0.rawValue, signature: $0.arguments.map(\.type).joined()) },
            signalArgumentNames: Dictionary(uniqueKeysWithValues: WatchSignal.allCases.map { ($0.rawValue, $0.arguments.map(\.name)) }))
    }

}
