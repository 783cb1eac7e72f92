import Foundation
import TSDevice
import TSGatewayAPI
import TSModels
import TSStore
import TSWatchService

/// What a device command does to a watch, whoever holds the link: this process (BlueZ or the
/// simulated watch, through the watch service's operations), or `tsgateway serve` when it runs
/// and serves the watch (through its D-Bus API, behind which the same operations run).
protocol WatchAccess: Sendable {
    var watchId: String { get }
    func info() async throws -> DeviceInfo
    /// What the watch can do, as its dialect says; nil through the daemon (its status carries
    /// the services, not the dialect's capabilities).
    func capabilities() async throws -> WatchCapabilities?
    func battery() async throws -> BatteryStatus
    func lastSync() async throws -> Date?
    func syncTime() async throws
    func alarms() async throws -> [Alarm]
    func setAlarms(_ alarms: [Alarm]) async throws
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig
    func setMonitorConfig(_ config: MonitorConfig) async throws
    func syncSleep(_ request: SyncRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult
    /// Heart Rate Measurements while the link lasts.
    func heartRate() async throws -> AsyncThrowingStream<HeartRateSample, any Error>
    /// Changes made on the watch itself, until the link (or the daemon) goes away.
    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: AlarmTableOrigin, alarms: [Alarm]), any Error>
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
                    throw CLIFailure.from(error)
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
        do {
            let served = try await client.watches()
            guard !served.isEmpty else { return nil }
            let chosen = try WatchSelection.choose(device, among: served.map { WatchIdentity(id: $0.id, name: $0.name) })
            return chosen.map { DaemonWatchAccess(remote: client.watch($0.id)) }
        } catch {
            throw CLIFailure.from(error)
        }
    }
}

struct LocalWatchAccess: WatchAccess {
    let session: DeviceSession
    var operations: WatchOperations { session.operations }
    var watchId: String { session.operations.watchId }

    func info() async throws -> DeviceInfo { try await session.connect() }
    func capabilities() async throws -> WatchCapabilities? { await operations.watch.capabilities }
    func battery() async throws -> BatteryStatus { try await operations.battery() }
    func lastSync() async throws -> Date? { try await operations.lastSync() }
    func syncTime() async throws { try await operations.syncTime() }
    func alarms() async throws -> [Alarm] { try await operations.alarms() }
    func setAlarms(_ alarms: [Alarm]) async throws { try await operations.setAlarms(alarms) }
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig { try await operations.monitorConfig(type) }
    func setMonitorConfig(_ config: MonitorConfig) async throws { try await operations.setMonitorConfig(config) }

    func syncSleep(_ request: SyncRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult {
        SyncResult(try await operations.syncSleep(request) { update in progress(update.received, update.total) })
    }

    func heartRate() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        let samples = try await operations.heartRate()
        // The simulated wearer's heart beats once a second while someone listens.
        guard let standard = session.simulatedStandard else { return samples }
        let beating = Task { await standard.beat(every: .seconds(1)) }
        return AsyncThrowingStream { continuation in
            let forward = Task {
                do {
                    for try await sample in samples { continuation.yield(sample) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in forward.cancel(); beating.cancel() }
        }
    }

    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: AlarmTableOrigin, alarms: [Alarm]), any Error> {
        let changes = operations.watch.alarmTableChanges()
        let losses = operations.watch.linkLosses()
        let operations = self.operations
        let editor = session.startSimulatedWatchSideEdits(every: .seconds(2))
        // A lost link ends the stream with its reason instead of waiting forever.
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await change in changes {
                    do {
                        try await operations.recordWatchSideChange(change)
                    } catch {
                        continuation.finish(throwing: error)
                        return
                    }
                    continuation.yield((change.origin, change.alarms))
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

    func capabilities() async throws -> WatchCapabilities? { nil }

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

    func syncSleep(_ request: SyncRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncResult {
        try await remote.syncSleep(request, progress: progress)
    }

    /// The samples the daemon receives while it holds the link (its HeartRate signals). A watch
    /// the daemon knows to lack the Heart Rate service fails at once, as over an own link.
    func heartRate() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        if let services = try await remote.knownStatus()?.info?.offeredServices, !services.contains(.heartRate) {
            let offered = services.isEmpty ? "no service tsgateway knows" : services.sorted.map(\.title).joined(separator: ", ")
            throw CLIFailure("\(remote.id) cannot give heart rate (no Heart Rate service; it offers \(offered))", status: ExitStatus(ErrorCategory.notSupported))
        }
        return try await remote.heartRate()
    }

    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<(origin: AlarmTableOrigin, alarms: [Alarm]), any Error> {
        let changes = try await remote.alarmChanges()
        return AsyncThrowingStream { continuation in
            let forward = Task {
                do {
                    // The daemon also announces its own writes; this command shows the watch's.
                    for try await change in changes where change.origin != .gateway { continuation.yield(change) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in forward.cancel() }
        }
    }
}
