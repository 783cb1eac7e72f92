import Foundation
import Logging
import TSBlueZ
import TSDevice
import TSFamilies
import TSFamilyKit
import TSFiles
import TSGatewayService
import TSModels
import TSSimulatedHistory
import TSSimulator
import TSStore
import TSWatchService

/// The watch service's operations on one watch for one command (own link, own store), and what
/// must happen after it.
struct DeviceSession {
    static let simulatedWatchId = WatchID("00:00:5E:00:53:01")!
    static let simulatedHistoryDays = 90

    let operations: WatchOperations
    let logger: Logger
    /// The simulated watch, whatever its dialect; nil for a real watch.
    private let simulated: (any SimulatedDevice)?
    private let simulatorPath: String?

    static func open(_ options: ConnectionOptions) async throws -> DeviceSession {
        let logger = options.makeLogger()
        PhaseLog.log("session opening", to: logger)
        let store = try openStore(options)
        PhaseLog.log("store opened", to: logger)
        guard options.simulate else { return try await openBluetooth(options, store: store, logger: logger) }
        let path = GatewayPaths.simulatorStatePath(databasePath: store.path)
        let memory = try SimulatedWatchMemory.load(from: path)
        var simulated = SimulatedWatchOptions()
        simulated.seed = memory.seed
        simulated.timeZone = TimeZone(identifier: memory.timeZone) ?? .current
        simulated.historyDays = simulatedHistoryDays
        simulated.now = simulatorNow()
        simulated.alarms = memory.alarms
        simulated.monitors = memory.monitors
        simulated.protocolVersion = try simulatorProtocol()
        simulated.wearer = try simulatedWearer()
        var configuration = WatchConfiguration()
        configuration.traffic = Logging.traffic(to: logger)
        let opened: OpenedSimulatedWatch
        do { opened = try WatchFamilies.openSimulated(simulated, dialect: options.dialect, configuration: configuration) } catch { throw CLIFailure.from(error) }
        logger.info("simulated watch: \(opened.device.recordCount) records over \(simulatedHistoryDays) days, state in \(path)")
        if let log = try SimulatedCommitLog.fromEnvironment() {
            guard await opened.device.onSleepCommit({ log.append($0) }) else {
                throw CLIFailure("TSGATEWAY_SIMULATOR_COMMIT_LOG: the simulated \(options.dialect?.rawValue ?? "watch") takes no sleep commit; use protocol v1's", status: .usage)
            }
        }
        var operations = WatchOperations(watch: opened.central, store: store, watchId: simulatedWatchId, name: "Simulated watch", policy: WatchPolicy())
        operations.simulatedActivity = SimulatedWearerActivity(device: opened.device)
        return DeviceSession(operations: operations, logger: logger, simulated: opened.device, simulatorPath: path)
    }

    /// A real watch over BlueZ: `--device ADDRESS`, or the one watch this gateway knows.
    static func openBluetooth(_ options: ConnectionOptions, store: GatewayStore, logger: Logger) async throws -> DeviceSession {
        let stored = try await store.watches().filter { $0.id != simulatedWatchId }
        let known = stored.map { WatchIdentity(id: $0.id, name: $0.name) }
        let address: WatchID
        do {
            if let chosen = try WatchSelection.choose(options.device, among: known) {
                address = chosen.id
            } else if let device = options.device.flatMap(WatchID.init) {
                address = device
            } else {
                throw WatchSelectionError.unknown(options.device ?? "")
            }
        } catch {
            throw CLIFailure.from(error)
        }
        let bluez: BlueZ
        do { bluez = try BlueZ.connect() } catch { throw CLIFailure.from(error) }
        PhaseLog.log("system bus connected", to: logger)
        let link = BluetoothLink(adapter: options.adapter, address: address)
        let opened: OpenedWatch
        do {
            let remembered = stored.first { $0.id == link.address }?.info?.dialect
            let (dialect, reason) = try await WatchOpener.resolveDialect(for: link, bluez: bluez, asked: options.dialect, remembered: remembered,
                                                                            among: WatchFamilies.dialects)
            logger.info("speaking \(dialect.name) (\(reason.rawValue))")
            // The watch's clock is set at connect only from a clock tsgateway trusts (`time sync` says why not).
            var configuration = WatchConfiguration()
            configuration.traffic = Logging.traffic(to: logger)
            if let credential = dialect.credential, credential.neededOnEveryConnect {
                configuration.pairingSecret = RememberedSecrets.load(credential, watch: address, databasePath: store.path)
            }
            if let distrust = try await ClockCheck.trust(databasePath: store.path, simulate: false).distrust {
                configuration.syncTimeOnConnect = false
                logger.info("the watch's clock is not set at connect: \(distrust.why)")
            }
            if let pinned = try pinnedWatchClock() { configuration.now = { pinned } }
            opened = WatchOpener.open(.bluetooth(link, bluez: bluez), dialect: dialect, configuration: configuration) { step in PhaseLog.log(step.rawValue, to: logger) }
        } catch {
            throw CLIFailure.from(error)
        }
        logger.info("using \(address) over BlueZ")
        let operations = WatchOperations(watch: opened.central, store: store, watchId: address, policy: WatchPolicy(),
                                         link: link, logger: logger)
        return DeviceSession(operations: operations, logger: logger, simulated: nil, simulatorPath: nil)
    }

    static func openStore(_ options: ConnectionOptions) throws -> GatewayStore {
        do {
            return try GatewayStore(path: options.databasePath)
        } catch let unwritable as StorageUnwritable {
            // Refused before the watch was reached: nothing was acknowledged to it.
            throw CLIFailure.from(unwritable.with(consequence: "the watch was not contacted, nothing was acknowledged to it", retry: "try again"))
        } catch {
            throw CLIFailure("\(error) (choose another file with --db PATH)", status: .ioError)
        }
    }

    /// Connects and records the watch in the store.
    @discardableResult
    func connect() async throws -> DeviceInfo {
        let started = Date()
        let info = try await operations.connect()
        let mtu = await operations.watch.linkMTU ?? 0
        let timings = await operations.watch.connectTimings
        if let firstByte = timings.firstByte {
            PhaseLog.log("first byte", at: started.addingTimeInterval(firstByte.timeInterval), to: logger)
        }
        PhaseLog.log("hello, info and time set", to: logger)
        func milliseconds(_ duration: Duration?) -> String { duration.map { "\(Int(($0 / .milliseconds(1)).rounded())) ms" } ?? "–" }
        logger.info("connected to \(info.model) firmware \(info.firmware), MTU \(mtu); link open after \(milliseconds(timings.linkOpen)), first byte after \(milliseconds(timings.firstByte))")
        return info
    }

    /// Disconnects and saves what the simulated watch now remembers.
    func finish() async throws {
        await operations.watch.disconnect()
        PhaseLog.log("disconnected", to: logger)
        // What a destructive watch would have deleted: `-v` says it (the storage tests read it).
        if let acknowledged = await simulated?.night?.simulator.acknowledgements {
            let ranges = acknowledged.map { "[\($0.start), \($0.end)) \($0.count) records" }
            logger.info("simulated watch: \(ranges.isEmpty ? "nothing acknowledged" : "acknowledged " + ranges.joined(separator: ", "))")
        }
        // Every dialect's simulated watch remembers its alarms (and monitors, where it keeps them as such).
        if let simulated, let simulatorPath {
            var memory = try SimulatedWatchMemory.load(from: simulatorPath)
            if let alarms = await simulated.alarmTable() { memory.alarms = alarms }
            if let monitors = await simulated.monitorTable() { memory.monitors = monitors }
            try memory.save(to: simulatorPath)
        }
    }


    /// Runs `body` connected, always finishing the session, and maps failures to CLI errors.
    static func run<T>(_ options: ConnectionOptions, _ body: (DeviceSession) async throws -> T) async throws -> T {
        let session = try await open(options)
        do {
            let result = try await body(session)
            try await session.finish()
            return result
        } catch {
            try? await session.finish()
            throw CLIFailure.from(error)
        }
    }
}

/// The simulated watch's wearer while a command watches: a heartbeat a second while someone
/// listens, an edit of the first alarm on the wrist every two seconds.
struct SimulatedWearerActivity: SimulatedActivity {
    let device: any SimulatedDevice

    func heartbeats() -> Task<Void, Never> {
        let standard = device.standardServices
        return Task { await standard?.beat(every: .seconds(1)) }
    }

    func wristEdits() -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                if Task.isCancelled { return }
                await device.editFirstAlarmOnWrist()
            }
        }
    }
}

/// The simulated watch's clock (TSGATEWAY_SIMULATOR_NOW pins it).
func simulatorNow() -> Date { SimulatorClock.now() }

/// TSGATEWAY_WATCH_NOW (ISO 8601) pins the clock the central writes to a real watch (time set,
/// a login and a sync range): a test hook, so that a captured sync replays byte for byte with
/// `protocol replay --now` at the same instant (the e2e suite's captured syncs).
func pinnedWatchClock(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Date? {
    guard let text = environment["TSGATEWAY_WATCH_NOW"], !text.isEmpty else { return nil }
    guard let date = ISO8601DateFormatter().date(from: text) else {
        throw CLIFailure("TSGATEWAY_WATCH_NOW=\(text) is not an ISO 8601 time such as 2026-11-27T00:38:45Z", status: .usage)
    }
    return date
}

/// The protocol the simulated watch speaks: 1.1 unless TSGATEWAY_SIMULATOR_PROTOCOL says 1.0.
func simulatorProtocol(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SimulatedProtocol {
    guard let text = environment["TSGATEWAY_SIMULATOR_PROTOCOL"], !text.isEmpty else { return .version1_1 }
    guard let chosen = SimulatedProtocol(text: text) else {
        throw CLIFailure("TSGATEWAY_SIMULATOR_PROTOCOL=\(text) is not a protocol the simulated watch speaks; use \(SimulatedProtocol.choices)", status: .usage)
    }
    return chosen
}

/// What the wearer of a simulated watch does when asked to confirm a bind: confirm, unless
/// TSGATEWAY_SIMULATOR_WEARER says decline or ignore.
func simulatedWearer(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SimulatedWearer {
    guard let text = environment["TSGATEWAY_SIMULATOR_WEARER"], !text.isEmpty else { return .confirm }
    guard let wearer = SimulatedWearer(rawValue: text) else {
        throw CLIFailure("TSGATEWAY_SIMULATOR_WEARER=\(text) is not what the simulated wearer can do; use \(SimulatedWearer.choices)", status: .usage)
    }
    return wearer
}

/// What the simulated watch keeps between runs. Its sleep history is regenerated from the seed.
struct SimulatedWatchMemory: Codable {
    var version = 1
    var seed: UInt64
    var timeZone: String
    var alarms: [Alarm]
    var monitors: [MonitorConfig]

    static func load(from path: String) throws -> SimulatedWatchMemory {
        guard FileManager.default.fileExists(atPath: path) else {
            return SimulatedWatchMemory(seed: 20_251_119, timeZone: TimeZone.current.identifier, alarms: [
                .simulatorDefault,
            ], monitors: [])
        }
        do {
            return try JSONDecoder().decode(SimulatedWatchMemory.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CLIFailure("the simulated watch's state file \(path) is unreadable (\(JSONErrorText.describe(error))); delete it to start afresh", status: .dataError)
        }
    }

    func save(to path: String) throws {
        do { try PrivateFile.write(try JSONCoding.encoder(pretty: true).encode(self), to: path) } catch { throw CLIFailure.from(error) }
    }
}
