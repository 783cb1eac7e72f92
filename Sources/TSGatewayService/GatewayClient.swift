import Foundation
import TSDBus
import TSModels
import TSProtocol
import TSSleep

/// A client of a running `tsgateway serve`, over its D-Bus API. The CLI uses it so that two
/// processes never fight over one BLE link.
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
        try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: interface, member: member, arguments, timeout: timeout)
    }

    func string(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(60)) async throws -> String {
        let reply = try await call(path, interface, member, arguments, timeout: timeout)
        guard let text = reply.first?.stringValue else {
            throw BusError.unexpectedReply(member, expected: "s", got: reply.map(\.signature).joined())
        }
        return text
    }

    // MARK: Gateway

    public func watches() async throws -> [WatchStatus] {
        try GatewayBusAPI.decode([WatchStatus].self, json: try await string(GatewayBusAPI.rootPath, GatewayBusAPI.gatewayInterface, "ListWatches"))
    }

    /// Every event of the daemon, until the daemon leaves the bus (then the stream throws).
    public func events() async throws -> AsyncThrowingStream<GatewayEvent, any Error> {
        try await signals(SignalMatch(path: GatewayBusAPI.rootPath, interface: GatewayBusAPI.gatewayInterface, member: "Event")) { signal in
            signal.arguments.first?.stringValue.flatMap { try? GatewayEvent.decode(json: $0) }
        }
    }

    /// The daemon's signals matching `match`, mapped by `transform` (nil skips one), until the
    /// daemon leaves the bus: then the stream throws, so that a client never waits forever.
    func signals<Value: Sendable>(_ match: SignalMatch, _ transform: @escaping @Sendable (DBusSignal) -> Value?) async throws -> AsyncThrowingStream<Value, any Error> {
        let signals = try await connection.signals(match)
        let owner = try await connection.signals(SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        let connection = self.connection
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await signal in signals {
                    if let value = transform(signal) { continuation.yield(value) }
                }
                continuation.finish(throwing: connection.isClosed ? BusError(name: BusError.disconnected, message: "the connection to the bus was lost") : nil)
            }
            let watchOwner = Task {
                for await signal in owner where signal.arguments.first?.stringValue == GatewayBusAPI.busName && signal.arguments.last?.stringValue == "" {
                    continuation.finish(throwing: BusError(name: BusError.nameHasNoOwner, message: "the gateway daemon (tsgateway serve) stopped"))
                    return
                }
            }
            continuation.onTermination = { _ in forward.cancel(); watchOwner.cancel() }
        }
    }

    public func watch(_ id: String) -> RemoteWatch { RemoteWatch(client: self, id: id) }
}

/// One watch the daemon serves.
public struct RemoteWatch: Sendable {
    public let client: GatewayClient
    public let id: String
    public var path: String { GatewayBusAPI.path(forWatch: id) }

    func string(_ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(60)) async throws -> String {
        try await client.string(path, GatewayBusAPI.watchInterface, member, arguments, timeout: timeout)
    }

    /// Connects if needed and reads the battery, then the status.
    public func status() async throws -> WatchStatus {
        try GatewayBusAPI.decode(WatchStatus.self, json: try await string("GetInfo"))
    }

    /// What the daemon already knows, without a round trip to the watch.
    public func knownStatus() async throws -> WatchStatus? {
        try await client.watches().first { $0.id == id }
    }

    public func alarms() async throws -> [Alarm] {
        try GatewayBusAPI.decode([Alarm].self, json: try await string("GetAlarms"))
    }

    public func setAlarms(_ alarms: [Alarm]) async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, "SetAlarms", [.string(try GatewayBusAPI.json(alarms))])
    }

    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        try GatewayBusAPI.decode(MonitorConfig.self, json: try await string("GetMonitor", [.string(type.name)]))
    }

    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, "SetMonitor", [.string(try GatewayBusAPI.json(config))])
    }

    public func syncTime() async throws {
        _ = try await client.call(path, GatewayBusAPI.watchInterface, "SyncTime")
    }

    /// Syncs through the daemon; `progress` gets its SyncProgress signals.
    public func syncSleep(from: Int64, to: Int64?, progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> SyncResult {
        let updates = try await client.connection.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: "SyncProgress"))
        let forward = Task {
            for await signal in updates {
                if let received = signal.arguments.first?.int32Value, let total = signal.arguments.last?.int32Value {
                    progress?(Int(received), Int(total))
                }
            }
        }
        defer { forward.cancel() }
        return try GatewayBusAPI.decode(SyncResult.self, json: try await string("SyncSleep", [.int64(from), .int64(to ?? 0)], timeout: .seconds(3600)))
    }

    /// Daily sleep models from the daemon's database; `rule` nil: the configured or the watch's own.
    public func dailySleep(first: String, last: String, timeZone: String, rule: Int?) async throws -> DailySleepReport {
        try GatewayBusAPI.decode(DailySleepReport.self, json: try await string("DailySleep", [.string(first), .string(last), .string(timeZone), .int32(Int32(rule ?? -1))]))
    }

    public func session() async throws -> SessionReport {
        try GatewayBusAPI.decode(SessionReport.self, json: try await string("GetSession"))
    }

    /// Alarm tables as the watch reports them changed (AlarmsChanged signals).
    public func alarmChanges() async throws -> AsyncThrowingStream<(origin: String, alarms: [Alarm]), any Error> {
        try await client.signals(SignalMatch(path: path, interface: GatewayBusAPI.watchInterface, member: "AlarmsChanged")) { signal in
            guard let json = signal.arguments.first?.stringValue, let alarms = try? GatewayBusAPI.decode([Alarm].self, json: json) else { return nil }
            return (signal.arguments.last?.stringValue ?? "", alarms)
        }
    }
}
