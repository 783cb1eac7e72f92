import Foundation
import Logging
import Synchronization
import TSDevice
import TSModels
import TSSleep
import TSStore

/// How a gateway treats its watches: the same for the CLI's own link and for `tsgateway serve`.
public struct WatchPolicy: Sendable {
    /// The zone nights and daily reports are computed in.
    public var timeZone: TimeZone
    /// The statistics rule chosen by the configuration; nil: each watch's own.
    public var statisticsRule: StatisticsRule?
    /// How far back the first sync of a watch reaches when no start is given.
    public var firstSyncDays = 30
    /// Reconnects allowed during one sync when a request does not say.
    public var syncReconnects = 5

    public init(timeZone: TimeZone = .current, statisticsRule: StatisticsRule? = nil) {
        self.timeZone = timeZone
        self.statisticsRule = statisticsRule
    }

    /// The rule a daily report uses: the one asked for, else the configured one, else the
    /// watch's own, else rule 1 (a watch never reached yet).
    public func rule(asked: StatisticsRule?, watch capabilities: WatchCapabilities?) -> StatisticsRule {
        .resolved(asked: asked, configured: statisticsRule, watch: capabilities?.statisticsRule)
    }
}

/// The BlueZ link to a real watch: the adapter (nil: BlueZ's choice) and the watch's address.
public struct BluetoothLink: Sendable, Hashable {
    public var adapter: String?
    public var address: WatchID

    public init(adapter: String?, address: WatchID) {
        self.adapter = adapter
        self.address = address
    }
}

/// A sleep sync asked for: records with start in [from, to); nil `from`: from where the last
/// sync of this watch began (or `firstSyncDays` back); nil `to`: up to now; nil `reconnects`:
/// the policy's.
public struct SyncRequest: Sendable, Hashable {
    public var from: Int64?
    public var to: Int64?
    public var reconnects: Int?
    /// Where the gateway set the watch's clock back to since the stored records (the system
    /// clock stepped back): the watch may stamp what it records next before the sync cursor, so
    /// the transfer asks from here (`SleepSync.watchClockSetBackTo`).
    public var watchClockSetBackTo: Int64?

    public init(from: Int64? = nil, to: Int64? = nil, reconnects: Int? = nil, watchClockSetBackTo: Int64? = nil) {
        self.from = from
        self.to = to
        self.reconnects = reconnects
        self.watchClockSetBackTo = watchClockSetBackTo
    }
}

/// The operations on one watch, each with what it must leave in the store. The CLI's own link
/// and `tsgateway serve` both go through here, so an alarm read, a sync or a daily report is
/// the same whoever asks; the front doors add only their own concerns (a daemon's events and
/// schedules, a command's output). What the watch answered is stored even when the caller is
/// cancelled meanwhile (`shieldedFromCancellation`): the watch holds that table or config now.
public struct WatchOperations: Sendable {
    /// The watch in its dialect.
    public let watch: any WatchCentral
    public let store: GatewayStore
    public let watchId: WatchID
    /// The configured name, kept in the store when the watch connects.
    public let name: String?
    public let policy: WatchPolicy
    /// The BlueZ link of a real watch, whose connection interval a sync shortens; nil for the
    /// simulated watch.
    public let link: BluetoothLink?
    /// What a simulated watch does by itself while this process watches it; nil for a real watch
    /// and in the daemon (whose simulated nights drive their watches).
    public var simulatedActivity: (any SimulatedActivity)?
    let logger: Logger

    public init(watch: any WatchCentral, store: GatewayStore, watchId: WatchID, name: String? = nil, policy: WatchPolicy,
                link: BluetoothLink? = nil, logger: Logger? = nil) {
        self.watch = watch
        self.store = store
        self.watchId = watchId
        self.name = name
        self.policy = policy
        self.link = link
        self.logger = logger ?? Logger(label: "tsgateway", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Connects (when not connected) and records what the watch said about itself.
    @discardableResult
    public func connect() async throws -> DeviceInfo {
        let known = try await store.watches().first { $0.id == watchId }?.info
        let info = try await watch.connect()
        // A watch that spoke a dialect of its own does not lose its service: without it, its
        // GATT server is (re)starting (seen on the real stack when the peripheral restarts), so
        // this is a connect to retry, not a watch that became a standard-services-only one.
        // (Unless the standard services were asked for: `--dialect standard`.)
        // (A watch stored before dialects were remembered, with capabilities, spoke the fallback: protocol v1.)
        let fallback = Dialect.fallback
        if let known, let spoke = known.dialect ?? (known.capabilities.sleepSync != nil ? fallback : nil), spoke != .standard,
           watch.dialect != .standard, info.dialect == .standard {
            await watch.disconnect()
            let service = spoke == fallback ? "protocol v1" : "\(spoke) dialect's"
            throw WatchError.connectFailed("the watch's \(service) service is not there; it had one before, so its GATT server is probably restarting", .unavailable)
        }
        try await shieldedFromCancellation { [store, watchId, name] in try await store.saveWatch(id: watchId, name: name, info: info) }
        return info
    }

    public func battery() async throws -> BatteryStatus { try await watch.battery() }

    public func syncTime() async throws { try await watch.syncTime() }

    /// Heart Rate Measurements as samples stamped with the gateway's clock, until the link
    /// ends (then the stream finishes with the link's reason), while a simulated watch's wearer's
    /// heart beats (`simulatedActivity`). A watch without the Heart Rate service fails at once
    /// with `.notSupported`; malformed values are counted by the watch and left out.
    public func heartRateSamples() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        let measurements = try await watch.heartRateMeasurements(malformed: nil)
        let beating = simulatedActivity?.heartbeats()
        let losses = watch.linkLosses()
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await measurement in measurements { continuation.yield(HeartRateSample(measurement, at: Date())) }
                continuation.finish()
            }
            let ending = Task {
                for await reason in losses { continuation.finish(throwing: WatchError.disconnected(reason)); return }
            }
            continuation.onTermination = { _ in forward.cancel(); ending.cancel(); beating?.cancel() }
        }
    }

    public func lastSync() async throws -> Date? {
        try await store.watches().first { $0.id == watchId }?.lastSync
    }

    /// The table as the watch holds it; kept in the alarm history.
    public func alarms() async throws -> [Alarm] {
        let alarms = try await watch.alarms()
        try await shieldedFromCancellation { [store, watchId] in try await store.saveAlarmSnapshot(alarms, watch: watchId, origin: .read) }
        return alarms
    }

    /// The latest table the alarm history holds (read, written by this gateway or announced by
    /// the watch); nil before any. What the gateway knows of a table it cannot read back.
    public func lastKnownAlarms() async throws -> [Alarm]? {
        try await store.latestAlarmSnapshot(watch: watchId)?.alarms
    }

    /// Replaces the table (checked against the watch's limits first).
    public func setAlarms(_ alarms: [Alarm]) async throws { try await writeAlarms(alarms) }

    /// Replaces the table (checked against the watch's limits first); returns whether the
    /// history changed (the daemon announces a change only then).
    @discardableResult
    public func writeAlarms(_ alarms: [Alarm]) async throws -> Bool {
        try await watch.setAlarms(alarms)
        return try await shieldedFromCancellation { [store, watchId] in try await store.saveAlarmSnapshot(alarms, watch: watchId, origin: .gateway) }
    }

    /// A table the watch announced as changed on its side; returns whether the history changed.
    @discardableResult
    public func recordWatchSideChange(_ change: AlarmTableChange) async throws -> Bool {
        try await shieldedFromCancellation { [store, watchId] in
            try await store.saveAlarmSnapshot(change.alarms, watch: watchId, origin: change.origin)
        }
    }

    /// A watch that does not report a setting back (`MonitorSettingNotReported`) is answered with
    /// the one this gateway last wrote to it, or, before any, the setting switched off.
    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        let config: MonitorConfig
        do {
            config = try await watch.monitorConfig(type)
        } catch is MonitorSettingNotReported {
            let written = try await store.monitorConfigs(watch: watchId).first { $0.type == type }
            return written ?? MonitorConfig(type: type, schedule: MonitorSchedule(enabled: false))
        }
        try await shieldedFromCancellation { [store, watchId] in try await store.saveMonitorConfig(config, watch: watchId) }
        return config
    }

    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        try await watch.setMonitorConfig(config)
        try await shieldedFromCancellation { [store, watchId] in try await store.saveMonitorConfig(config, watch: watchId) }
    }

    /// Copies the records of `request` into the store (SleepSync: acknowledged to the watch only
    /// once stored). When the database feeds an upload outbox (`tsgateway serve` with an
    /// `upload:` section wrote its setting), the nights the sync completes enter it in the same
    /// transactions, whichever front door ran the sync.
    public func syncSleep(_ request: SyncRequest, progress: (@Sendable (SleepSyncProgress) -> Void)? = nil) async throws -> SleepSyncReport {
        let start: Int64
        if let from = request.from {
            start = from
        } else if let cursor = try await store.syncCursor(watch: watchId) {
            start = cursor.rangeStart
        } else {
            start = Int64(watch.configuration.now().timeIntervalSince1970) - Int64(policy.firstSyncDays) * 86_400
        }
        var sync = SleepSync(watch: watch, store: store, watchId: watchId)
        sync.maxReconnects = request.reconnects ?? policy.syncReconnects
        sync.watchClockSetBackTo = request.watchClockSetBackTo
        let logger = self.logger
        let pagesLogged = Mutex(0)
        sync.progress = { step in
            // The first and the last page of a transfer.
            let stored = pagesLogged.withLock { pages in pages += 1; return pages }
            if stored == 1 { PhaseLog.log("first page stored", to: logger) }
            if step.received == step.total { PhaseLog.log("last page stored", to: logger) }
            progress?(step)
        }
        let allowed = sync.maxReconnects
        sync.reconnecting = { attempt, cause in
            logger.info("the link was given up (\(cause)); reconnecting, \(attempt) of at most \(allowed)")
        }
        if let uploads = try await store.uploadSetting() {
            sync.outbox = OutboxPolicy(timeZone: uploads.timeZone, statisticsRule: uploads.statisticsRule)
        }
        // A bulk transfer runs at a short connection interval, and the link is relaxed after it.
        let fast = link.flatMap { FastConnection.begin(adapter: $0.adapter, address: $0.address.rawValue, logger: logger) }
        if link != nil { PhaseLog.log("connection interval requested", to: logger) }
        defer {
            if let fast {
                FastConnection.end(fast, logger: logger)
                PhaseLog.log("connection interval relaxed", to: logger)
            }
        }
        let report = try await sync.run(from: start, to: request.to)
        PhaseLog.log("committed", to: logger)
        return report
    }

    /// Daily reports of the local dates [first, last] from the stored records.
    public func dailySleep(first: LocalDate, last: LocalDate, timeZone: TimeZone? = nil, rule: StatisticsRule? = nil) async throws -> DailySleepReport {
        var policy = self.policy
        if let timeZone { policy.timeZone = timeZone }
        return try await store.dailySleepReport(watch: watchId, first: first, last: last, policy: policy, rule: rule)
    }
}
