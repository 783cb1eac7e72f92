import Foundation
import Logging
import Synchronization
import TSDevice
import TSGatewayAPI
import TSModels
import TSSimulator
import TSSleep
import TSStore
import TSTransport
import TSWatchService

/// Keeps one watch connected for the daemon: connects at start and again with backoff after
/// every loss, syncs sleep on a schedule and on demand (one sync at a time), sets the watch's
/// clock daily, reads its battery, follows its live sleep session, and turns everything the
/// watch reports into `GatewayEvent`s. All operations on the watch go through here, so one
/// link has one owner.
public actor WatchSupervisor {
    public let entry: GatewayConfiguration.WatchEntry
    public nonisolated var id: WatchID { entry.address }
    /// The watch service's operations on this watch; every operation of the daemon goes through them.
    public let operations: WatchOperations
    public nonisolated var watch: any WatchCentral { operations.watch }
    public let sessions: LiveSessionTracker
    nonisolated var store: GatewayStore { operations.store }
    let settings: GatewayConfiguration
    /// Whether the system clock may set the watch's (shared by the daemon's supervisors).
    let clock: ClockDiscipline
    /// Whether the disk holding the database takes writes (shared likewise); nil: not watched.
    let storage: StorageHealth?
    let publish: @Sendable (GatewayEvent) -> Void
    let logger: Logger
    /// The time of day: a sync's range end, the watch's clock (the central's), the time of a sync.
    let wallClock: WallClock
    /// The watch side when the watch is simulated in-process (its live night is played from here).
    let simulated: SimulatedNight?
    private let statusCell: StatusCell

    /// The daemon's upload worker, woken when a sync puts nights in the outbox.
    private var uploads: UploadOutbox?
    private var connectTask: Task<DeviceInfo, any Error>?
    private var syncTask: Task<SleepSyncReport, any Error>?
    private var lastTimeSync: ContinuousClock.Instant?
    /// The wall clock and the monotonic clock at the duties' last look: a step of the wall
    /// clock is what the one ran beyond the other.
    private var wallReference: (wall: Date, monotonic: ContinuousClock.Instant)?
    /// How far the watch's clock is ahead of the wall clock by the steps since it was last set.
    private var watchClockAhead: TimeInterval = 0
    /// The watch's clock was set back (to `to`, from `from`): syncs ask from `to` until one
    /// begins after `from`, since the watch stamps what it records meanwhile before the cursor.
    private var watchClockSetBack: (to: Int64, from: Int64)?
    /// While the system clock is not trusted: why (the watch's clock is held, scheduled syncs wait).
    private var clockHeld: ClockDistrust?
    /// When the system clock is looked at again while it is not trusted.
    private var nextClockCheck: ContinuousClock.Instant?
    private var lastBatteryRead: ContinuousClock.Instant?
    /// The watch's alarm table as last read, written or announced (smart wake decides on it).
    var alarmTable: [Alarm] = []
    /// Smart windows whose start was announced by this process.
    var announcedWindows: Set<SmartWake.Occurrence> = []
    private var nextScheduledSync = ContinuousClock.now
    private let reconnectPause = WakeableSleep()
    /// The periodic duties' pause, ended early when the disk takes writes again (the sync it refused runs then).
    private let dutiesPause = WakeableSleep()
    /// A wrist edit the disk refused, stored once it takes writes again.
    private var unsavedAlarmChange: AlarmTableChange?

    /// How the daemon's centrals behave: the configured zone; the clock is set by `duties`.
    public static func watchConfiguration(_ settings: GatewayConfiguration) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = settings.timeZone
        configuration.syncTimeOnConnect = false
        return configuration
    }

    /// The same for one watch: its auth code, should it have to bind again.
    public static func watchConfiguration(_ settings: GatewayConfiguration, entry: GatewayConfiguration.WatchEntry) -> WatchConfiguration {
        var configuration = watchConfiguration(settings)
        configuration.pairingSecret = entry.pairingSecret
        return configuration
    }

    /// `watch`: the central `WatchOpener` made for `entry` with `watchConfiguration(settings)`.
    /// `clock`: the daemon's `ClockDiscipline`; nil: this machine's evidence without timedated.
    /// `wallClock`: the central's too (`WatchConfiguration.now`).
    public init(entry: GatewayConfiguration.WatchEntry, watch: any WatchCentral, store: GatewayStore,
                settings: GatewayConfiguration, simulated: SimulatedNight? = nil, clock: ClockDiscipline? = nil, storage: StorageHealth? = nil,
                wallClock: WallClock = .system, logger: Logger, publish: @escaping @Sendable (GatewayEvent) -> Void) {
        self.entry = entry
        self.wallClock = wallClock
        self.clock = clock ?? ClockDiscipline(source: SystemClockEvidence(store: store, timedatedBus: nil), logger: logger)
        self.storage = storage
        // A real watch's syncs shorten its connection interval where the daemon may (CAP_NET_RAW).
        let link = entry.simulated ? nil : BluetoothLink(adapter: entry.adapter, address: entry.address)
        operations = WatchOperations(watch: watch, store: store,
                                     watchId: entry.address, name: entry.name, policy: settings.watchPolicy, link: link, logger: logger)
        self.settings = settings
        self.simulated = simulated
        self.logger = logger
        self.publish = publish
        let cell = StatusCell(WatchStatus(id: entry.address, name: entry.name, simulated: entry.simulated, dialect: watch.dialect))
        statusCell = cell
        sessions = LiveSessionTracker(watchId: entry.address, store: store, timeZone: settings.timeZone) { event in
            switch event.kind {
            case let .session(_, session, _):
                cell.update {
                    $0.sessionState = WatchStatus.sessionState(session)
                    if session.state != .open { $0.sleepStage = nil }
                }
            case let .liveStage(stage, _):
                cell.update { $0.sleepStage = $0.sessionState == .open || $0.sessionState == .interrupted ? stage : nil }
            default:
                break
            }
            publish(event)
        }
    }

    /// The central of the entry's dialect (`WatchDialects.fallback` when it names none) over `transport`.
    public init(entry: GatewayConfiguration.WatchEntry, transport: any WatchTransport, store: GatewayStore,
                settings: GatewayConfiguration, simulated: SimulatedNight? = nil, clock: ClockDiscipline? = nil, storage: StorageHealth? = nil,
                wallClock: WallClock = .system, logger: Logger, publish: @escaping @Sendable (GatewayEvent) -> Void) {
        let dialect = entry.dialect.flatMap { try? WatchDialects.named($0) } ?? WatchDialects.fallback
        var configuration = Self.watchConfiguration(settings, entry: entry)
        configuration.now = wallClock.now
        self.init(entry: entry, watch: dialect.makeCentral(transport, configuration), store: store,
                  settings: settings, simulated: simulated, clock: clock, storage: storage, wallClock: wallClock, logger: logger, publish: publish)
    }

    /// A snapshot for property getters; safe from any thread.
    public nonisolated var status: WatchStatus { statusCell.value }

    func updateStatus(_ change: (inout WatchStatus) -> Void) {
        statusCell.update(change)
    }

    // MARK: The loop

    /// Runs until cancelled: connect, serve the connection until the link is lost, back off, again.
    /// What the store knows of the watch (last sync, model and firmware), in the status before
    /// anything publishes it: a restarted gateway must not announce them as unknown.
    public func restoreKnownStatus() async {
        guard !restored else { return }
        restored = true
        if let known = try? await store.watches().first(where: { $0.id == id }) {
            updateStatus { $0.lastSync = $0.lastSync ?? known.lastSync; $0.info = $0.info ?? known.info }
        }
    }

    private var restored = false

    public func run() async {
        storage?.whenWritable { [weak self] in await self?.storageWritable() }
        await restoreKnownStatus()
        // Whether the watch's clock will be held is known (and said) before the first connect.
        await lookAtTheClock()
        do {
            try await sessions.recover()
            let latest = try await sessions.latest()
            updateStatus { $0.sessionState = WatchStatus.sessionState(latest); $0.sleepStage = latest?.state == .open ? latest?.currentStage : nil }
        } catch {
            logger.error("\(id): cannot recover live sessions: \(error)")
        }
        var backoff = settings.reconnectMinimum
        while !Task.isCancelled {
            let losses = watch.linkLosses()
            do {
                try await ensureConnected()
                reconnectPause.forgetWake()
                backoff = settings.reconnectMinimum
            } catch is CancellationError {
                break
            } catch {
                let reason = String(describing: error)
                updateStatus { $0.lastError = reason }
                logger.warning("\(id): cannot connect (\(reason)); next try in \(Self.format(backoff))")
                publish(GatewayEvent(.connection(connected: false, reason: reason), watch: id))
                await reconnectPause.sleep(for: backoff.jittered())
                backoff = min(backoff * 2, settings.reconnectMaximum)
                continue
            }
            let reason = await serveConnection(losses: losses)
            guard !Task.isCancelled else { break }
            logger.warning("\(id): link lost (\(reason)); reconnecting")
            await reconnectPause.sleep(for: settings.reconnectMinimum.jittered())
        }
        await shutdown()
    }

    /// While connected: the watch's events and the periodic duties, until the link ends.
    private func serveConnection(losses: AsyncStream<String>) async -> String {
        let alarmChanges = watch.alarmTableChanges()
        let liveStages = watch.liveSleepStages()
        let capabilities = await watch.capabilities
        let heartRates = capabilities.heartRate ? await subscribe("heart rate") { try await operations.heartRate() } : nil
        let batteryLevels = capabilities.batteryNotifications ? await subscribe("battery level") { try await watch.batteryLevelChanges() } : nil
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await reason in losses { return reason }
                return "the gateway is stopping"
            }
            group.addTask { [self] in
                for await change in alarmChanges { await alarmsChanged(change) }
                return nil
            }
            group.addTask { [self] in
                for await event in liveStages {
                    await save("live session") { [sessions] in try await sessions.handle(event) }
                    // A light or awake stage inside a smart window rings at once, not at the next look.
                    if capabilities.ring { await decideSmartWakeLogged() }
                }
                return nil
            }
            group.addTask { [self] in
                await duties()
                return nil
            }
            if let heartRates {
                group.addTask { [self] in
                    await recordHeartRate(heartRates)
                    return nil
                }
            }
            if status.info?.capabilities.supportsRing == true {
                group.addTask { [self] in
                    await smartWakeLoop()
                    return nil
                }
            }
            if status.info?.capabilities.reportsAlarmAlerts == true {
                let alerts = watch.alarmAlertNotices()
                group.addTask { [self] in
                    for await alert in alerts { await alarmAlerted(alert) }
                    return nil
                }
            }
            if let batteryLevels {
                group.addTask { [self] in
                    for await level in batteryLevels { await batteryNotified(Int(level)) }
                    return nil
                }
            }
            if let simulated {
                group.addTask { await simulated.play(); return nil }
            }
            var reason = "the gateway is stopping"
            while let next = await group.next() {
                if let next { reason = next; break }
            }
            group.cancelAll()
            // What was received before the loss is saved first; the session is interrupted after its last stage.
            await group.waitForAll()
            await linkEnded(reason: reason)
            return reason
        }
    }

    private func duties() async {
        // A watch that hands over no sleep records has nothing to sync.
        var syncs = true
        if status.info != nil { syncs = await watch.capabilities.sleepSync != nil }
        while !Task.isCancelled {
            noticeWallClockStep()
            var now = ContinuousClock.now
            let timeDue = lastTimeSync.map { now - $0 >= settings.timeSyncInterval } ?? true
            // The clock is looked at when it matters: a sync's range and the watch's clock end at "now".
            if (syncs && now >= nextScheduledSync) || timeDue, nextClockCheck.map({ now >= $0 }) ?? true {
                await lookAtTheClock()
                now = ContinuousClock.now
            }
            if syncs, now >= nextScheduledSync, clockHeld == nil {
                nextScheduledSync = now + settings.syncInterval
                do {
                    _ = try await syncSleep(SyncRequest())
                } catch is CancellationError {
                    return
                } catch {
                    // A disk that refused the records is said once, for the whole gateway (`StorageHealth`).
                    if StorageHealth.condition(of: error) == nil { logger.warning("\(id): scheduled sync failed: \(error)") }
                    nextScheduledSync = ContinuousClock.now + min(settings.syncInterval, .seconds(60))
                }
            }
            if timeDue, clockHeld == nil {
                do {
                    try await watch.syncTime()
                    lastTimeSync = now
                    watchClockSet()
                } catch where ErrorCategory.of(error) == .notSupported {
                    logger.info("\(id): the watch's clock is not set: \(error)")
                    lastTimeSync = now
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("\(id): cannot set the watch's clock: \(error)")
                    lastTimeSync = now - settings.timeSyncInterval + .seconds(60)
                }
            }
            if lastBatteryRead.map({ now - $0 >= settings.batteryInterval }) ?? true {
                lastBatteryRead = now
                await readBattery()
            }
            await save("live session heartbeat") { [sessions, wallClock] in try await sessions.heartbeat(now: wallClock.now()) }
            let nextBattery = (lastBatteryRead ?? now) + settings.batteryInterval
            let nextTime = (lastTimeSync ?? now) + settings.timeSyncInterval
            var until = min(nextBattery, now + .seconds(60))
            if clockHeld == nil {
                until = min(until, syncs ? nextScheduledSync : until, nextTime)
            } else if let nextClockCheck {
                // The held sync and clock are overdue: only the next look at the clock can release them.
                until = min(until, nextClockCheck)
            }
            await dutiesPause.sleep(for: until - ContinuousClock.now)
            if Task.isCancelled { return }
        }
    }

    /// A step of the wall clock beyond `stepTolerance` (NTP's first answer, a clock set by hand)
    /// moves no schedule (they run on the monotonic clock), but the watch's clock was set from
    /// the clock before the step: it is set again now, and the clock's trust looked at again.
    static let stepTolerance: TimeInterval = 10

    private func noticeWallClockStep() {
        let current = (wall: wallClock.now(), monotonic: ContinuousClock.now)
        defer { wallReference = current }
        guard let last = wallReference else { return }
        let step = current.wall.timeIntervalSince(last.wall) - (current.monotonic - last.monotonic).timeInterval
        guard abs(step) > Self.stepTolerance else { return }
        logger.notice("\(id): the system clock was stepped \(step > 0 ? "forward" : "back") by \(Int(abs(step).rounded())) s; the watch's clock is set again")
        if lastTimeSync != nil { watchClockAhead -= step }
        lastTimeSync = nil
        nextClockCheck = nil
    }

    /// The watch's clock is the wall clock's now: set back, what it records next starts before the cursor.
    private func watchClockSet() {
        let now = Int64(wallClock.now().timeIntervalSince1970)
        if watchClockAhead > Self.stepTolerance {
            // A little before now: the watch took its time a moment before this.
            let to = now - Int64(Self.stepTolerance), from = now + Int64(watchClockAhead.rounded(.up))
            watchClockSetBack = (to: min(to, watchClockSetBack?.to ?? to), from: max(from, watchClockSetBack?.from ?? from))
        }
        watchClockAhead = 0
    }

    /// The disk takes writes again: a wrist edit it refused is stored, and the sync it refused runs now.
    private func storageWritable() async {
        if let change = unsavedAlarmChange {
            unsavedAlarmChange = nil
            if await save("alarm change", { [operations] in try await operations.recordWatchSideChange(change) }) == nil, unsavedAlarmChange == nil {
                unsavedAlarmChange = change
            } else {
                logger.info("\(id): the alarm change made on the watch is stored now")
            }
        }
        nextScheduledSync = ContinuousClock.now
        dutiesPause.wake()
    }

    /// Asks the daemon's `ClockDiscipline`. The first time the system clock is not trusted the
    /// watch's clock is held: said once as a `clock` event and in the status (MQTT's state);
    /// when it is trusted again, said again with `trusted`, and the duties set the clock.
    private func lookAtTheClock() async {
        switch await clock.check() {
        case let .untrusted(distrust):
            nextClockCheck = ContinuousClock.now + settings.clockCheckInterval
            guard clockHeld == nil else { return }
            clockHeld = distrust
            updateStatus { $0.clockHeld = distrust.why }
            logger.info("\(id): the watch's clock is not set, and scheduled syncs wait: \(distrust.why)")
            publish(GatewayEvent(.clock(trusted: false, reason: distrust.why), watch: id))
        case .trusted:
            nextClockCheck = nil
            guard clockHeld != nil else { return }
            clockHeld = nil
            updateStatus { $0.clockHeld = nil }
            publish(GatewayEvent(.clock(trusted: true, reason: nil), watch: id))
        }
    }

    /// Notifications of one characteristic; nil (logged) when the watch refuses the subscription.
    private func subscribe<Values>(_ what: String, _ start: () async throws -> Values) async -> Values? {
        do {
            return try await start()
        } catch {
            logger.warning("\(id): \(what) notifications not followed: \(error)")
            return nil
        }
    }

    private func alarmsChanged(_ change: AlarmTableChange) async {
        alarmTable = change.alarms
        // Refused by a full or read-only disk: kept here, the latest table only, and stored when the disk is back.
        if await save("alarm change", { [operations] in try await operations.recordWatchSideChange(change) }) == nil,
           storage?.condition != nil {
            unsavedAlarmChange = change
        } else if unsavedAlarmChange != nil {
            unsavedAlarmChange = nil
        }
        publish(GatewayEvent(.alarmsChanged(alarms: change.alarms, origin: change.origin), watch: id))
    }

    private func linkEnded(reason: String) async {
        updateStatus { $0.connected = false; $0.heartRate = nil }
        publish(GatewayEvent(.connection(connected: false, reason: reason), watch: id))
        await save("live session") { [sessions] in try await sessions.interrupt(reason: reason) }
    }

    /// Where the supervisor hands what it received to the store (an alarm edit made on the
    /// wrist, a live stage or session change, heart-rate samples, a smart-wake decision): what
    /// was received is stored, though the link's task group or the daemon is being cancelled
    /// (`shieldedFromCancellation`). A write that fails all the same is logged; nil then.
    @discardableResult
    func save<T: Sendable>(_ what: String, _ write: @escaping @Sendable () async throws -> T) async -> T? {
        do {
            return try await shieldedFromCancellation(write)
        } catch {
            // A full or read-only disk is said once for the gateway, not at every write it refuses.
            if storage?.noticed(error) == true {
                logger.debug("\(id): \(what) not saved: \(error)")
            } else {
                logger.error("\(id): \(what) not saved: \(error)")
            }
            return nil
        }
    }

    /// Stops cleanly: a running sync is cancelled (what is stored stays stored, nothing is
    /// acknowledged to the watch that is not), the open session is marked interrupted, the link closed.
    private func shutdown() async {
        syncTask?.cancel()
        _ = try? await syncTask?.value
        await save("live session") { [sessions] in try await sessions.interrupt(reason: "the gateway stopped") }
        await watch.disconnect()
        updateStatus { $0.connected = false; $0.heartRate = nil }
    }

    public func setUploads(_ uploads: UploadOutbox?) { self.uploads = uploads }

    // MARK: Operations

    /// Connects now if the link is down (joining a connect already under way).
    public func ensureConnected() async throws {
        if await watch.isConnected { return }
        if let connectTask {
            _ = try await connectTask.value
            return
        }
        let task = Task { [operations] in try await operations.connect() }
        connectTask = task
        defer { connectTask = nil }
        let info = try await task.value
        // The alarm table as the link comes up: the history and the next alarm start from it.
        if info.capabilities.maxAlarms > 0 {
            do {
                alarmTable = try await operations.alarms()
            } catch {
                logger.info("\(id): alarm table not read at connect: \(error)")
            }
        }
        updateStatus { $0.connected = true; $0.info = info; $0.lastError = nil }
        logger.info("\(id): connected to \(info.model)\(info.firmware.isEmpty ? "" : " firmware \(info.firmware)")")
        publish(GatewayEvent(.connection(connected: true, reason: nil), watch: id))
        if info.capabilities.supportsLiveSleep {
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

    static func format(_ duration: Duration) -> String {
        let seconds = duration.timeInterval
        return seconds < 10 ? String(format: "%.1f s", seconds) : "\(Int(seconds)) s"
    }
}

extension Duration {
    /// ±20 %, so that several watches (or gateways) do not retry in step.
    func jittered() -> Duration { self * Double.random(in: 0.8...1.2) }
}

/// The watch's status behind a lock, for D-Bus property getters on any thread.
final class StatusCell: Sendable {
    private let mutex: Mutex<WatchStatus>

    init(_ status: WatchStatus) { mutex = Mutex(status) }

    var value: WatchStatus { mutex.withLock { $0 } }

    func update(_ change: (inout WatchStatus) -> Void) { mutex.withLock { change(&$0) } }
}
