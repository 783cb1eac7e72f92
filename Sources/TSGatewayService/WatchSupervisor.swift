import Foundation
import Logging
import Synchronization
import TSDevice
import TSFamilies
import TSFamilyKit
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
    var uploads: UploadOutbox?
    var connectTask: Task<DeviceInfo, any Error>?
    var syncTask: Task<SleepSyncReport, any Error>?
    var lastTimeSync: ContinuousClock.Instant?
    /// The wall clock and the monotonic clock at the duties' last look: a step of the wall
    /// clock is what the one ran beyond the other.
    var wallReference: (wall: Date, monotonic: ContinuousClock.Instant)?
    /// How far the watch's clock is ahead of the wall clock by the steps since it was last set.
    var watchClockAhead: TimeInterval = 0
    /// The watch's clock was set back (to `to`, from `from`): syncs ask from `to` until one
    /// begins after `from`, since the watch stamps what it records meanwhile before the cursor.
    var watchClockSetBack: (to: Int64, from: Int64)?
    /// While the system clock is not trusted: why (the watch's clock is held, scheduled syncs wait).
    var clockHeld: ClockDistrust?
    /// When the system clock is looked at again while it is not trusted.
    var nextClockCheck: ContinuousClock.Instant?
    var lastBatteryRead: ContinuousClock.Instant?
    /// The watch's alarm table as last read, written or announced (smart wake decides on it).
    var alarmTable: [Alarm] = []
    /// Smart windows whose start was announced by this process.
    var announcedWindows: Set<SmartWake.Occurrence> = []
    var nextScheduledSync = ContinuousClock.now
    let reconnectPause = WakeableSleep()
    /// The periodic duties' pause, ended early when the disk takes writes again (the sync it refused runs then).
    let dutiesPause = WakeableSleep()
    /// A wrist edit the disk refused, stored once it takes writes again.
    var unsavedAlarmChange: AlarmTableChange?
    /// The front doors' `heartRateSamples()` and `watchSideAlarmChanges()` streams, open until
    /// their reader stops or the daemon does (`WatchSupervisor+WatchAccess.swift`).
    nonisolated let heartRateReaders = EventFanOut<HeartRateSample>(buffer: 64)
    nonisolated let alarmChangeReaders = EventFanOut<AlarmTableChange>(buffer: 16)

    /// How the daemon's centrals behave: the configured zone; the clock is set by `duties`.
    public static func watchConfiguration(_ settings: GatewayConfiguration) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = settings.timeZone
        configuration.syncTimeOnConnect = false
        return configuration
    }

    /// The same for one watch: its auth code, should it have to bind again; a secret its dialect
    /// takes on every connect (a band's auth key) from the configuration, else the one `pair`
    /// kept beside the database.
    public static func watchConfiguration(_ settings: GatewayConfiguration, entry: GatewayConfiguration.WatchEntry) -> WatchConfiguration {
        var configuration = watchConfiguration(settings)
        configuration.pairingSecret = entry.pairingSecret ?? settings.rememberedSecret(of: entry)
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

    /// The central of the entry's dialect (`WatchFamilies.fallback` when it names none) over `transport`.
    public init(entry: GatewayConfiguration.WatchEntry, transport: any WatchTransport, store: GatewayStore,
                settings: GatewayConfiguration, simulated: SimulatedNight? = nil, clock: ClockDiscipline? = nil, storage: StorageHealth? = nil,
                wallClock: WallClock = .system, logger: Logger, publish: @escaping @Sendable (GatewayEvent) -> Void) {
        let dialect = entry.dialect.flatMap { try? WatchFamilies.dialect(named: $0) } ?? WatchFamilies.fallback
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
        let alarmChanges = watch.watchSideAlarmChanges()
        let liveStages = watch.liveSleepStages()
        let capabilities = await watch.capabilities
        let heartRates = capabilities.heartRate ? await subscribe("heart rate") { try await operations.heartRateSamples() } : nil
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
            if status.info?.capabilities.ring == true {
                group.addTask { [self] in
                    await smartWakeLoop()
                    return nil
                }
            }
            if status.info?.capabilities.alarmAlerts == true {
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
        alarmChangeReaders.send(change)
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
        heartRateReaders.finishAll()
        alarmChangeReaders.finishAll()
    }

    public func setUploads(_ uploads: UploadOutbox?) { self.uploads = uploads }

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
