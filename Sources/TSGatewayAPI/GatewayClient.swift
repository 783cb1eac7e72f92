import Foundation
import TSDBus
import TSDevice
import TSModels
import TSSleep
import TSWatchService

/// A client of a running `tsgateway serve`, over its D-Bus API. The CLI uses it so that two
/// processes never fight over one BLE link. Failures come out as `CategorizedFailure`s with the
/// daemon's own error category, never as raw D-Bus errors.
public final class GatewayClient: Sendable {
    public let connection: BusConnection

    public init(connection: BusConnection) {
        self.connection = connection
    }

    /// The bus the daemon is looked for on: TSGATEWAY_BUS=session|system (default system;
    /// DBUS_SYSTEM_BUS_ADDRESS moves the system bus, as for every libdbus program).
    public static func preferredBus(environment: [String: String] = ProcessInfo.processInfo.environment) -> BusConnection.Bus {
        environment["TSGATEWAY_BUS"] == "session" ? .session : .system
    }

    /// "session" or "system", for messages.
    public static func preferredBusName(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        preferredBus(environment: environment) == .session ? "session" : "system"
    }

    /// A client when a daemon owns the name on the preferred bus; nil when none runs (or there
    /// is no such bus, as in a container).
    public static func ifRunning(environment: [String: String] = ProcessInfo.processInfo.environment) async -> GatewayClient? {
        let bus = preferredBus(environment: environment)
        if bus == .session, environment["DBUS_SESSION_BUS_ADDRESS"] == nil { return nil }
        guard let connection = try? BusConnection(bus) else { return nil }
        guard (try? await connection.nameHasOwner(GatewayBusAPI.busName)) == true else {
            connection.close()
            return nil
        }
        return GatewayClient(connection: connection)
    }

    public func close() { connection.close() }

    func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = .seconds(60)) async throws -> [DBusValue] {
        do {
            return try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: interface, member: member, arguments, timeout: timeout)
        } catch let error as BusError {
            throw GatewayBusAPI.failure(error)
        }
    }

    /// The single reply value of `member`, which must have `signature`.
    func value(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [], signature: String,
               timeout: Duration = .seconds(60)) async throws -> DBusValue {
        let reply = try await call(path, interface, member, arguments, timeout: timeout)
        guard reply.count == 1, let value = reply.first, value.signature == signature else {
            throw CategorizedFailure(.protocolError, "tsgateway serve answered \(member) with \"\(reply.map(\.signature).joined())\", expected \"\(signature)\"; is it of another version?")
        }
        return value
    }

    func string(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(60)) async throws -> String {
        try await value(path, interface, member, arguments, signature: "s", timeout: timeout).stringValue ?? ""
    }

    // MARK: Gateway

    public func watches() async throws -> [WatchStatus] {
        let reply = try await value(GatewayBusAPI.rootPath, GatewayBusAPI.gatewayInterface, GatewayMethod.listWatches.rawValue, signature: "aa{sv}")
        return try (reply.arrayValue ?? []).map { entry in
            guard let status = entry.propertiesValue.flatMap(GatewayBusAPI.status) else {
                throw CategorizedFailure(.protocolError, "tsgateway serve listed a watch without a valid address: \(entry)")
            }
            return status
        }
    }

    /// Every event of the daemon, until the daemon leaves the bus (then the stream throws).
    public func events() async throws -> AsyncThrowingStream<GatewayEvent, any Error> {
        try await signals(SignalMatch(path: GatewayBusAPI.rootPath, interface: GatewayBusAPI.gatewayInterface, member: GatewaySignal.event.rawValue)) { signal in
            signal.arguments.first?.stringValue.flatMap { try? GatewayEvent.decode(json: $0) }
        }
    }

    /// The daemon's signals matching `match`, mapped by `transform` (nil skips one), until the
    /// daemon leaves the bus: then the stream throws, so that a client never waits forever.
    func signals<Value: Sendable>(_ match: SignalMatch, _ transform: @escaping @Sendable (DBusSignal) -> Value?) async throws -> AsyncThrowingStream<Value, any Error> {
        let signals: AsyncStream<DBusSignal>, owner: AsyncStream<DBusSignal>
        do {
            signals = try await connection.signals(match)
            owner = try await connection.signals(SignalMatch(sender: StandardBusNames.bus, interface: StandardBusNames.bus, member: "NameOwnerChanged"))
        } catch let error as BusError {
            throw GatewayBusAPI.failure(error)
        }
        let connection = self.connection
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await signal in signals {
                    if let value = transform(signal) { continuation.yield(value) }
                }
                continuation.finish(throwing: connection.isClosed ? CategorizedFailure(.unavailable, "the connection to the bus was lost") : nil)
            }
            let watchOwner = Task {
                for await signal in owner where signal.arguments.first?.stringValue == GatewayBusAPI.busName && signal.arguments.last?.stringValue == "" {
                    continuation.finish(throwing: CategorizedFailure(.unavailable, "the gateway daemon (tsgateway serve) stopped"))
                    return
                }
            }
            continuation.onTermination = { _ in forward.cancel(); watchOwner.cancel() }
        }
    }

    public func watch(_ id: WatchID) -> RemoteWatch { RemoteWatch(client: self, id: id) }
}

/// One watch the daemon serves.
public struct RemoteWatch: Sendable {
    public let client: GatewayClient
    public let id: WatchID
    public var path: String { GatewayBusAPI.path(forWatch: id) }

    func string(_ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(60)) async throws -> String {
        try await client.string(path, GatewayBusAPI.watchInterface, member, arguments, timeout: timeout)
    }

    /// Connects if needed and reads the battery, then the status.
    public func status() async throws -> WatchStatus {
        let reply = try await client.value(path, GatewayBusAPI.watchInterface, WatchMethod.getInfo.rawValue, signature: "a{sv}")
        guard let status = reply.propertiesValue.flatMap(GatewayBusAPI.status) else {
            throw CategorizedFailure(.protocolError, "tsgateway serve answered GetInfo without a valid address of the watch")
        }
        return status
    }

    /// What the daemon already knows, without a round trip to the watch.
    public func knownStatus() async throws -> WatchStatus? {
        try await client.watches().first { $0.id == id }
    }

    public func alarms() async throws -> [Alarm] {
        try AlarmJSON.table(from: try await string(WatchMethod.getAlarms.rawValue).utf8)
    }

    public func setAlarms(_ alarms: [Alarm]) async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, WatchMethod.setAlarms.rawValue, [.string(try GatewayBusAPI.json(alarms))])
    }

    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        try GatewayBusAPI.decode(MonitorConfig.self, json: try await string(WatchMethod.getMonitor.rawValue, [.string(type.name)]))
    }

    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, WatchMethod.setMonitor.rawValue, [.string(try GatewayBusAPI.json(config))])
    }

    public func syncTime() async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, WatchMethod.syncTime.rawValue)
    }

    /// Syncs through the daemon; `progress` gets its SyncProgress signals.
    public func syncSleep(_ request: SyncRequest, progress: (@Sendable (SleepSyncProgress) -> Void)? = nil) async throws -> SleepSyncReport {
        let updates = try await client.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: WatchSignal.syncProgress.rawValue)) { signal in
            signal.arguments.count == 2 ? (signal.arguments[0].uint32Value, signal.arguments[1].uint32Value) : nil
        }
        let forward = Task {
            for try await case let (received?, total?) in updates { progress?(SleepSyncProgress(received: Int(received), total: Int(total), reconnects: 0)) }
        }
        defer { forward.cancel() }
        let reply = try await client.value(path, GatewayBusAPI.watchInterface, WatchMethod.syncSleep.rawValue, [.properties(GatewayBusAPI.syncOptions(request))],
                                           signature: "a{sv}", timeout: .seconds(3600))
        guard let result = reply.propertiesValue.flatMap(GatewayBusAPI.syncResult) else {
            throw CategorizedFailure(.protocolError, "tsgateway serve answered SyncSleep without its counts")
        }
        return result
    }

    /// Daily reports from the daemon's database; nil zone and rule: the configured ones (or the watch's own rule).
    public func dailySleep(first: LocalDate, last: LocalDate, timeZone: TimeZone? = nil, rule: StatisticsRule? = nil) async throws -> DailySleepReport {
        try GatewayBusAPI.decode(DailySleepReport.self, json: try await string(
            WatchMethod.dailySleep.rawValue, [.string(first.description), .string(last.description), .properties(GatewayBusAPI.dailySleepOptions(timeZone: timeZone, rule: rule))]))
    }

    public func session() async throws -> SessionReport {
        try GatewayBusAPI.decode(SessionReport.self, json: try await string(WatchMethod.getSession.rawValue))
    }

    /// Alarm tables as the watch reports them changed (AlarmsChanged signals).
    public func alarmChanges() async throws -> AsyncThrowingStream<(origin: AlarmTableOrigin, alarms: [Alarm]), any Error> {
        try await client.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: WatchSignal.alarmsChanged.rawValue)) { signal in
            guard signal.arguments.count == 2, let json = signal.arguments[0].stringValue, let alarms = try? AlarmJSON.table(from: json.utf8),
                  let origin = signal.arguments[1].stringValue.flatMap(AlarmTableOrigin.init(rawValue:)) else { return nil }
            return (origin, alarms)
        }
    }

    /// The night's events of this watch (Night signals): the name, when, and the details.
    public func nightEvents() async throws -> AsyncThrowingStream<(event: NightEvent, time: Date), any Error> {
        try await client.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: WatchSignal.night.rawValue)) { signal in
            guard signal.arguments.count == 3, let name = signal.arguments[0].stringValue.flatMap(NightEvent.Name.init(rawValue:)),
                  let time = signal.arguments[1].int64Value, let details = signal.arguments[2].propertiesValue else { return nil }
            let event = GatewayBusAPI.nightEvent(name, details: details)
            return (event, Date(timeIntervalSince1970: TimeInterval(time)))
        }
    }

    /// Heart-rate samples as the daemon receives them from the watch (HeartRate signals), until
    /// the daemon leaves the bus.
    func heartRateSignals() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        try await client.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: WatchSignal.heartRate.rawValue)) { signal in
            signal.arguments.first?.propertiesValue.flatMap(GatewayBusAPI.heartRateSample)
        }
    }
}
