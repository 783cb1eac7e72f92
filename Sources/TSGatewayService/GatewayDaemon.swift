import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import TSBlueZ
import TSBlueZTransport
import TSDBus
import TSGatewayAPI
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSSimulator
import TSStore
import TSWatchService

/// `tsgateway serve`: one supervisor per configured watch and the D-Bus service over them.
/// Stops gracefully (SIGTERM, SIGINT through ServiceLifecycle): supervisors finish their
/// current store transaction, mark open sessions interrupted and close their links.
public final class GatewayDaemon: Service {
    public let configuration: GatewayConfiguration
    let logger: Logger
    public let events = EventFanOut<GatewayEvent>(buffer: 1024)
    /// Called once the objects are exported and the name is owned (tests, readiness).
    let onReady: (@Sendable () -> Void)?
    /// Whether the system clock may set the watches' (tests give their own); nil: this machine's (`ClockDiscipline.system`).
    let clockDiscipline: ClockDiscipline?

    public init(configuration: GatewayConfiguration, logger: Logger, clock: ClockDiscipline? = nil, onReady: (@Sendable () -> Void)? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.clockDiscipline = clock
        self.onReady = onReady
    }

    /// Fails with a `CategorizedError`: permission when the bus policy refuses the name,
    /// unavailable when the bus cannot be reached or another daemon owns the name.
    public func run() async throws {
        do {
            try await serve()
        } catch let error as BusError {
            throw CategorizedFailure(error.name == BusError.accessDenied ? .permission : .unavailable, error.message)
        }
    }

    private func serve() async throws {
        let store = try GatewayStore(path: configuration.database)
        // A TSGATEWAY_CLOCK that says neither trusted nor untrusted stops the daemon here, not at the first clock setting.
        _ = try SystemClockEvidence.assertion(ProcessInfo.processInfo.environment)
        // Uploads open libcurl on first use; a gateway that cannot is told now, not at its first night.
        if configuration.upload != nil {
            do { try HTTPPost.load() } catch {
                throw CategorizedFailure(.unavailable, "upload: cannot open libcurl (sudo apt install libcurl4): \(error)")
            }
        }
        let clock = clockDiscipline ?? ClockDiscipline.system(store: store, configuration: configuration, logger: logger)
        let storage = StorageHealth(directory: store.directory, watches: configuration.watches.map(\.address), logger: logger) { [events] in events.send($0) }
        let supervisors = try await makeSupervisors(store: store, clock: clock, storage: storage)
        let bus: BusConnection
        do {
            bus = try BusConnection(configuration.bus == .system ? .system : .session)
        } catch {
            throw BusError(name: error.name, message: "cannot reach the \(configuration.bus.rawValue) bus: \(error.message)"
                           + (configuration.bus == .session ? " (is DBUS_SESSION_BUS_ADDRESS set?)" : ""))
        }
        defer { bus.close() }
        let service = GatewayBusService(connection: bus, supervisors: supervisors, storage: storage, logger: logger)
        let forwarded = events.subscribe()
        try await service.start()
        // Only the instance that owns the name writes: every sync into this database, the
        // CLI's too, feeds the outbox while `upload:` is set.
        try await store.setUploadSetting(configuration.upload.map { _ in
            UploadSetting(timeZone: configuration.timeZone, statisticsRule: configuration.statisticsRule)
        })
        logger.notice("serving \(supervisors.count) watch\(supervisors.count == 1 ? "" : "es") as \(GatewayBusAPI.busName) on the \(configuration.bus.rawValue) bus; database \(configuration.database)")
        onReady?()
        let nudges = SimulatorNudges(supervisors: supervisors, logger: logger)
        for supervisor in supervisors {
            await supervisor.restoreKnownStatus()
            await supervisor.applyConfiguredSmartWake()
        }
        let mqtt = configuration.mqtt.map { MQTTBridge(settings: $0, store: store, supervisors: supervisors, timeZone: configuration.timeZone, storage: storage, logger: logger) }
        let mqttEvents = mqtt.map { _ in events.subscribe() }
        let uploads = configuration.upload.map { UploadOutbox(store: store, settings: $0, logger: logger, storage: storage) }
        for supervisor in supervisors { await supervisor.setUploads(uploads) }
        if let upload = configuration.upload { logger.notice("uploading synced nights to \(upload.endpoint.absoluteString)") }
        let reports = configuration.report.map { ReportWriter(settings: $0, supervisors: supervisors, timeZone: configuration.timeZone, logger: logger) }
        let reportEvents = reports.map { _ in events.subscribe() }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await service.forward(forwarded) }
                group.addTask { await nudges.run() }
                let retention = self.configuration.heartRateRetention, logger = self.logger
                group.addTask { await Self.pruneHeartRate(store: store, keeping: retention, clock: clock, logger: logger) }
                group.addTask { await DaemonHeap.trimPeriodically() }
                group.addTask { await storage.run() }
                if let mqtt, let mqttEvents { group.addTask { await mqtt.run(events: mqttEvents) } }
                if let uploads { group.addTask { await uploads.run() } }
                if let reports, let reportEvents { group.addTask { await reports.run(events: reportEvents) } }
                for supervisor in supervisors {
                    group.addTask { await supervisor.run() }
                }
                await group.waitForAll()
            }
        }
        await SimulatedGroundTruth.write(for: supervisors, logger: logger)
        logger.notice("stopped")
    }

    /// Until cancelled: every hour, deletes the heart-rate samples older than `retention` — not
    /// while the system clock is not trusted (a clock ahead would delete samples still kept).
    static func pruneHeartRate(store: GatewayStore, keeping retention: Duration, clock: ClockDiscipline, logger: Logger) async {
        repeat {
            guard await clock.check().isTrusted else { continue }
            do {
                let removed = try await store.pruneHeartRate(before: Date() - retention.timeInterval)
                if removed > 0 { logger.info("deleted \(removed) heart-rate sample\(removed == 1 ? "" : "s") older than the heart-rate-retention") }
            } catch {
                if Task.isCancelled { return }
                logger.warning("heart-rate samples not pruned: \(error)")
            }
        } while (try? await Task.sleep(for: .seconds(3600))) != nil
    }

    /// `clock`: what `serve` shares among its supervisors; nil: this daemon's own (`ClockDiscipline.system`).
    func makeSupervisors(store: GatewayStore, clock: ClockDiscipline? = nil, storage: StorageHealth? = nil) async throws -> [WatchSupervisor] {
        let clock = clock ?? clockDiscipline ?? ClockDiscipline.system(store: store, configuration: configuration, logger: logger)
        var bluez: BlueZ?
        let remembered = Dictionary(try await store.watches().map { ($0.id, $0.info?.dialect) }, uniquingKeysWith: { first, _ in first })
        var supervisors: [WatchSupervisor] = []
        for entry in configuration.watches {
            let publish: @Sendable (GatewayEvent) -> Void = { [events] event in
                events.send(event)
                for night in NightEvent.derived(from: event) { events.send(GatewayEvent(.night(night), watch: event.watch, time: event.time)) }
            }
            let label = entry.name.map { "\($0) (\(entry.address))" } ?? entry.address.rawValue
            var logger = self.logger
            logger[metadataKey: "watch"] = "\(label)"
            var watchConfiguration = WatchSupervisor.watchConfiguration(configuration, entry: entry)
            // The central's traffic (what it wrote, each answer and the request that took it) with -vv.
            if logger.logLevel <= .debug {
                let trafficLogger = logger
                watchConfiguration.traffic = { line in trafficLogger.debug("watch: \(line)") }
            }
            let central: any WatchCentral
            var simulated: (any SimulatedDevice)?
            if entry.simulated {
                let opened = try WatchFamilies.openSimulated(entry.simulatedOptions(timeZone: configuration.timeZone), dialect: entry.dialect,
                                                             configuration: watchConfiguration)
                central = opened.central
                simulated = opened.device
            } else {
                if bluez == nil {
                    do { bluez = try BlueZ.connect() } catch { throw BusError(name: BusError.failed, message: "cannot reach BlueZ: \(error)") }
                }
                let bluetooth = BluetoothLink(adapter: entry.adapter, address: entry.address)
                let (chosen, reason) = try await WatchOpener.resolveDialect(for: bluetooth, bluez: bluez!, asked: entry.dialect,
                                                                            remembered: remembered[entry.address] ?? nil, among: WatchFamilies.dialects)
                logger.info("speaking \(chosen.name) (\(reason.rawValue))")
                central = WatchOpener.open(.bluetooth(bluetooth, bluez: bluez!), dialect: chosen, configuration: watchConfiguration).central
            }
            if let path = entry.groundTruth.map(SimulatedGroundTruth.journalPath), let simulated {
                do { await simulated.keepWatchSideEdits(in: try WatchSideEditJournal(path: path)) } catch {
                    logger.error("wrist edits kept in memory: no journal at \(path): \(error)")
                }
            }
            supervisors.append(WatchSupervisor(entry: entry, watch: central, store: store, settings: configuration,
                                               simulated: simulated?.night, clock: clock, storage: storage, logger: logger, publish: publish))
        }
        return supervisors
    }
}

/// SIGUSR1: every simulated watch edits its first alarm as its wearer would (to try
/// watch-side change notifications end to end).
struct SimulatorNudges: Sendable {
    let supervisors: [WatchSupervisor]
    let logger: Logger

    func run() async {
        let simulated = supervisors.compactMap(\.simulated)
        guard !simulated.isEmpty else { return }
        let (signals, continuation) = AsyncStream.makeStream(of: Void.self)
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler { continuation.yield() }
        source.resume()
        defer { source.cancel() }
        for await _ in signals {
            logger.info("SIGUSR1: simulated watches edit their first alarm")
            for night in simulated { await night.simulator.nudgeFirstAlarmOnWatch() }
        }
    }
}

extension GatewayConfiguration.WatchEntry {
    /// The simulated watch this entry describes.
    func simulatedOptions(timeZone: TimeZone) -> SimulatedWatchOptions {
        var options = SimulatedWatchOptions()
        options.seed = seed
        options.timeZone = timeZone
        options.historyDays = historyDays
        options.protocolVersion = simulatedProtocol
        options.servesProtocolV1 = servesProtocolV1
        options.standardServices = standardServices
        options.packetDelay = packetDelay
        options.pauseAfterNotifications = pauseAfterPackets
        options.resumeFile = resumeFile
        options.disconnectEvery = disconnectEvery
        options.liveStageInterval = liveStageInterval
        options.heartRateInterval = heartRateInterval
        return options
    }
}
