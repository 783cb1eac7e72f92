import Foundation
import TSDevice
import TSGatewayAPI
import TSModels
import TSSleep
import TSStore
import TSWatchService

/// What the daemon's front doors (D-Bus, MQTT) ask of the watch one supervisor holds; each
/// connects first if the link is down.
extension WatchSupervisor {
    /// Connects now if the link is down, joining a connect already under way. That one is joined
    /// first: its link is open before its handshake is done (no model, no capabilities yet), and a
    /// front door's `info` that took the open link for a connected watch failed "the watch is not
    /// connected" (exit 69; the flake ledger).
    public func ensureConnected() async throws {
        if let connectTask {
            _ = try await connectTask.value
            return
        }
        let linkOpen = await watch.isConnected
        // A connect may have begun while the link was asked about.
        if let connectTask {
            _ = try await connectTask.value
            return
        }
        if linkOpen { return }
        let task = Task { [operations] in try await operations.connect() }
        connectTask = task
        defer { connectTask = nil }
        let info = try await task.value
        // The alarm table as the link comes up: the history and the next alarm start from it. A
        // table that cannot be read back is the one this gateway last wrote, if any.
        if let alarms = info.capabilities.alarms, alarms.maxCount > 0 {
            do {
                if alarms.readable {
                    alarmTable = try await operations.alarms()
                } else if let written = try await operations.lastKnownAlarms() {
                    alarmTable = written
                }
            } catch {
                logger.info("\(id): alarm table not read at connect: \(error)")
            }
        }
        updateStatus { $0.connected = true; $0.info = info; $0.lastError = nil }
        logger.info("\(id): connected to \(info.model)\(info.firmware.isEmpty ? "" : " firmware \(info.firmware)")")
        publish(GatewayEvent(.connection(connected: true, reason: nil), watch: id))
        if info.capabilities.liveStages {
            do { try await watch.setLiveSleepEvents(true) } catch { logger.warning("\(id): live sleep events not enabled: \(error)") }
        }
        reconnectPause.wake()
    }

    public func info() async throws -> DeviceInfo {
        try await ensureConnected()
        guard let info = await watch.info else { throw WatchError.notConnected }
        return info
    }

    public func battery() async throws -> BatteryStatus {
        try await ensureConnected()
        let battery = try await operations.battery()
        updateStatus { $0.batteryLevel = Int(battery.level); $0.batteryState = battery.state }
        return battery
    }

    public func syncTime() async throws {
        try await ensureConnected()
        try await operations.syncTime()
        lastTimeSync = .now
        watchClockSet()
    }

    public func alarms() async throws -> [Alarm] {
        try await ensureConnected()
        let table = try await operations.alarms()
        alarmTable = table
        return table
    }

    public func setAlarms(_ alarms: [Alarm]) async throws {
        try await ensureConnected()
        let changed = try await operations.writeAlarms(alarms)
        alarmTable = alarms
        if changed {
            publish(GatewayEvent(.alarmsChanged(alarms: alarms, origin: .gateway), watch: id))
        }
    }

    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        try await ensureConnected()
        return try await operations.monitorConfig(type)
    }

    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        try await ensureConnected()
        try await operations.setMonitorConfig(config)
    }

    /// Syncs as `request` asks (the watch service's policy fills what it leaves open). Waits
    /// for a sync already running, then runs its own.
    public func syncSleep(_ request: SyncRequest, progress: (@Sendable (SleepSyncProgress) -> Void)? = nil) async throws -> SleepSyncReport {
        // A range that ends "now" waits for a clock the gateway trusts (its cursor and night boundaries with it).
        if request.to == nil, let clockHeld {
            throw CategorizedFailure(.timeout, "\(clockHeld.why): a sync up to now waits until the clock is trusted, and then runs by itself; to sync now, give the range's end")
        }
        while let running = syncTask {
            _ = try? await running.value
            if syncTask == running { syncTask = nil }
        }
        try await ensureConnected()
        let started = Int64(wallClock.now().timeIntervalSince1970)
        var request = request
        let setBack = watchClockSetBack
        if request.to == nil, let setBack { request.watchClockSetBackTo = setBack.to }
        let task = Task { [operations, request] in try await operations.syncSleep(request, progress: progress) }
        syncTask = task
        updateStatus { $0.syncing = true }
        defer {
            if syncTask == task { syncTask = nil }
            updateStatus { $0.syncing = false }
        }
        let report: SleepSyncReport
        do {
            report = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch {
            storage?.noticed(error)
            throw error
        }
        // Records stamped by the watch's clock before it was set back are behind this sync now.
        if let setBack, request.to == nil, started > setBack.from, watchClockSetBack?.from == setBack.from { watchClockSetBack = nil }
        let now = wallClock.now()
        updateStatus { $0.lastSync = now }
        logger.info("\(id): synced \(report.fetched) records (\(report.stored) new)\(report.enqueued > 0 ? "; \(report.enqueued) night\(report.enqueued == 1 ? "" : "s") to upload" : "")")
        if report.enqueued > 0 { await uploads?.wake() }
        publish(GatewayEvent(.sleepSynced(fetched: report.fetched, stored: report.stored), watch: id, time: now))
        // The watch has handed over everything it held up to `to`, or up to when this sync began.
        let upTo = request.to ?? started
        try await shieldedFromCancellation { [sessions, wallClock] in try await sessions.syncedUpTo(upTo, now: wallClock.now()) }
        return report
    }

    /// Daily reports of the local dates [first, last] from the stored records.
    public func dailySleep(first: LocalDate, last: LocalDate, timeZone: TimeZone? = nil, rule: StatisticsRule? = nil) async throws -> DailySleepReport {
        try await operations.dailySleep(first: first, last: last, timeZone: timeZone, rule: rule)
    }
}
