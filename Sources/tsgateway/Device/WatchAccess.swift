import Foundation
import TSDBus
import TSDevice
import TSGatewayService
import TSModels
import TSProtocol
import TSStore

/// What a device command does to a watch, whoever holds the link: this process (BlueZ or the
/// simulated watch), or `tsgateway serve` when it runs and serves the watch. Both give the
/// command the same values, so the output is the same either way.
protocol WatchAccess: Sendable {
    var watchId: String { get }
    func info() async throws -> DeviceInfo
    func battery() async throws -> BatteryStatus
    func lastSync() async throws -> Date?
    func syncTime() async throws
    func alarms() async throws -> [Alarm]
    func setAlarms(_ alarms: [Alarm]) async throws
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig
    func setMonitorConfig(_ config: MonitorConfig) async throws
    func syncSleep(from: Int64, to: Int64?, reconnects: Int, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult
    /// Changes made on the watch itself, until the link (or the daemon) goes away.
    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: String, alarms: [Alarm]), any Error>
}

enum WatchAccessor {
    /// Runs `body` on the watch the options name: through the daemon when it serves that
    /// watch, otherwise over a link of this process's own.
    static func run<T>(_ options: ConnectionOptions, _ body: (any WatchAccess) async throws -> T) async throws -> T {
        if !options.simulate, let client = await GatewayClient.ifRunning() {
            defer { client.close() }
            if let remote = try await daemonWatch(client, device: options.device) {
                options.makeLogger().info("\(remote.watchId) is served by tsgateway serve; going through its D-Bus API")
                do {
                    return try await body(remote)
                } catch {
                    throw CLIFailure.fromDaemon(error)
                }
            }
        }
        return try await DeviceSession.run(options) { session in
            try await session.connect()
            return try await body(LocalWatchAccess(session: session))
        }
    }

    /// The daemon's watch for `--device` (address or name), or its only watch; nil when the
    /// daemon does not serve the watch asked for.
    static func daemonWatch(_ client: GatewayClient, device: String?) async throws -> DaemonWatchAccess? {
        let served: [WatchStatus]
        do { served = try await client.watches() } catch { throw CLIFailure.fromDaemon(error) }
        if let device {
            guard let match = served.first(where: { $0.isMeant(by: device) }) else { return nil }
            return DaemonWatchAccess(remote: client.watch(match.id))
        }
        guard served.count == 1, let only = served.first else {
            let list = served.map { watch in watch.name.map { "\($0) (\(watch.id))" } ?? watch.id }.joined(separator: ", ")
            throw CLIFailure("tsgateway serve holds several watches (\(list)); choose one with --device", status: .usage)
        }
        return DaemonWatchAccess(remote: client.watch(only.id))
    }
}

extension WatchStatus {
    /// `--device` names this watch: its address (any case) or its configured name.
    func isMeant(by device: String) -> Bool {
        id.caseInsensitiveCompare(device) == .orderedSame || name == device
    }
}

struct LocalWatchAccess: WatchAccess {
    let session: DeviceSession
    var watchId: String { session.watchId }

    func info() async throws -> DeviceInfo { try await session.connect() }
    func battery() async throws -> BatteryStatus { try await session.watch.battery() }
    func lastSync() async throws -> Date? { try await session.store.watches().first { $0.id == session.watchId }?.lastSync }
    func syncTime() async throws { try await session.watch.syncTime() }

    func alarms() async throws -> [Alarm] {
        let alarms = try await session.watch.alarms()
        try await session.store.saveAlarmSnapshot(alarms, watch: session.watchId, origin: "read")
        return alarms
    }

    func setAlarms(_ alarms: [Alarm]) async throws {
        try await session.watch.setAlarms(alarms)
        try await session.store.saveAlarmSnapshot(alarms, watch: session.watchId, origin: "set")
    }

    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        let config = try await session.watch.monitorConfig(type)
        try await session.store.saveMonitorConfig(config, watch: session.watchId)
        return config
    }

    func setMonitorConfig(_ config: MonitorConfig) async throws {
        try await session.watch.setMonitorConfig(config)
        try await session.store.saveMonitorConfig(config, watch: session.watchId)
    }

    func syncSleep(from: Int64, to: Int64?, reconnects: Int, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult {
        var sync = SleepSync(watch: session.watch, store: session.store, watchId: session.watchId)
        sync.maxReconnects = reconnects
        sync.progress = { update in progress(update.received, update.total) }
        let report = try await sync.run(from: from, to: to)
        return SyncResult(fetched: report.fetched, stored: report.stored, deletedOnWatch: report.deletedOnWatch, reconnects: report.reconnects)
    }

    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: String, alarms: [Alarm]), any Error> {
        let changes = await session.watch.alarmChanges()
        let losses = await session.watch.linkLosses()
        let store = session.store, watchId = session.watchId
        let editor = session.startSimulatedWatchSideEdits(every: .seconds(2))
        // A lost link ends the stream with its reason instead of waiting forever.
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await change in changes {
                    do {
                        try await store.saveAlarmSnapshot(change.alarms, watch: watchId, origin: change.origin.rawValue)
                    } catch {
                        continuation.finish(throwing: error)
                        return
                    }
                    continuation.yield((change.origin.rawValue, change.alarms))
                }
                continuation.finish()
            }
            let ending = Task {
                for await reason in losses { continuation.finish(throwing: WatchError.disconnected(reason)); return }
            }
            continuation.onTermination = { _ in forward.cancel(); ending.cancel(); editor?.cancel() }
        }
    }
}

struct DaemonWatchAccess: WatchAccess {
    let remote: RemoteWatch
    var watchId: String { remote.id }

    /// From the daemon's status; only a watch it has not reached yet costs a connect.
    func info() async throws -> DeviceInfo {
        if let info = try await remote.knownStatus()?.info { return info }
        guard let info = try await remote.status().info else {
            throw CLIFailure("tsgateway serve has not reached \(remote.id) yet; see `journalctl -u tsgateway`", status: .unavailable)
        }
        return info
    }

    func battery() async throws -> BatteryStatus {
        let status = try await remote.status()
        guard let level = status.batteryLevel, let state = status.batteryState else {
            throw CLIFailure("tsgateway serve has no battery reading of \(remote.id) yet", status: .unavailable)
        }
        return BatteryStatus(level: UInt8(clamping: level), state: state)
    }

    func lastSync() async throws -> Date? { try await remote.knownStatus()?.lastSync }
    func syncTime() async throws { try await remote.syncTime() }
    func alarms() async throws -> [Alarm] { try await remote.alarms() }
    func setAlarms(_ alarms: [Alarm]) async throws { try await remote.setAlarms(alarms) }
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig { try await remote.monitorConfig(type) }
    func setMonitorConfig(_ config: MonitorConfig) async throws { try await remote.setMonitorConfig(config) }

    func syncSleep(from: Int64, to: Int64?, reconnects: Int, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult {
        try await remote.syncSleep(from: from, to: to, progress: progress)
    }

    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: String, alarms: [Alarm]), any Error> {
        let changes = try await remote.alarmChanges()
        return AsyncThrowingStream { continuation in
            let forward = Task {
                do {
                    // The daemon also announces its own writes; this command shows the watch's.
                    for try await change in changes where change.origin != "gateway" { continuation.yield(change) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in forward.cancel() }
        }
    }
}

extension CLIFailure {
    /// The exit status and message for an error from the daemon's D-Bus API.
    static func fromDaemon(_ error: any Error) -> CLIFailure {
        guard let busError = error as? BusError else { return CLIFailure.from(error) }
        let api = GatewayBusAPI.ErrorName.allCases.first { $0.fullName == busError.name }
        let status: ExitStatus = switch api {
        case .notConnected: .unavailable
        case .timeout: .timeout
        case .protocolError: .protocolError
        case .invalidArguments, .notSupported: .dataError
        case .storage: .ioError
        case .failed: .failure
        case nil:
            switch busError.name {
            case BusError.accessDenied: .permission
            case BusError.noReply, BusError.timeout: .timeout
            case BusError.serviceUnknown, BusError.nameHasNoOwner, BusError.disconnected: .unavailable
            default: .failure
            }
        }
        if busError.name == BusError.accessDenied {
            return CLIFailure("tsgateway serve refused the change: only root and members of the tsgateway group may change the watch "
                              + "(sudo usermod -aG tsgateway $USER, then log in again; or run with sudo)", status: status)
        }
        if api == nil, status == .unavailable {
            return CLIFailure("tsgateway serve went away (\(busError.message)); check `systemctl status tsgateway`", status: status)
        }
        return CLIFailure(busError.message.isEmpty ? busError.name : busError.message, status: status)
    }
}
