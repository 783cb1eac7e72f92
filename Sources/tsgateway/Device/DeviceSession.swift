import Foundation
import Logging
import TSDevice
import TSModels
import TSProtocol
import TSSimulator
import TSStore
import TSTransport
import TSBlueZ

/// The store and a connected device actor for one command, and what must happen after it.
struct DeviceSession {
    static let simulatedWatchId = "00:00:5E:00:53:01"
    static let simulatedHistoryDays = 90

    let store: GatewayStore
    let watch: Watch
    let watchId: String
    let logger: Logger
    private let simulator: SimulatedWatch?
    private let simulatorPath: String?

    static func open(_ options: ConnectionOptions) async throws -> DeviceSession {
        let logger = options.makeLogger()
        let store = try openStore(options)
        guard options.simulate else { return try await openBluetooth(options, store: store, logger: logger) }
        let path = GatewayPaths.simulatorStatePath(databasePath: store.path)
        let memory = try SimulatedWatchMemory.load(from: path)
        let zone = TimeZone(identifier: memory.timeZone) ?? .current
        let now = simulatorNow()
        let records = SleepDataGenerator(seed: memory.seed, timeZone: zone).records(days: simulatedHistoryDays, lastMorning: now, notAfter: now)
        let simulator = SimulatedWatch(state: SimulatorState(alarms: memory.alarms, monitors: memory.monitors, records: records))
        let watch = Watch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)))
        logger.info("simulated watch: \(records.count) records over \(simulatedHistoryDays) days, state in \(path)")
        return DeviceSession(store: store, watch: watch, watchId: simulatedWatchId, logger: logger, simulator: simulator, simulatorPath: path)
    }

    /// A real watch over BlueZ: `--device ADDRESS`, or the one watch this gateway knows.
    static func openBluetooth(_ options: ConnectionOptions, store: GatewayStore, logger: Logger) async throws -> DeviceSession {
        let known = try await store.watches().filter { $0.id != simulatedWatchId }
        let address: String
        if let device = options.device {
            address = known.first { $0.name == device }?.id ?? device
        } else if known.count == 1, let only = known.first {
            address = only.id
        } else {
            throw CLIFailure(known.isEmpty ? "no watch known yet; pass --device ADDRESS (find it with `tsgateway scan`), or add --simulate"
                                           : "several watches are known; choose one with --device", status: .deviceNotFound)
        }
        guard address.range(of: "^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$", options: .regularExpression) != nil else {
            throw CLIFailure("\"\(address)\" is neither a Bluetooth address (AA:BB:CC:DD:EE:FF) nor the name of a known watch", status: .usage)
        }
        let bluez: BlueZ
        do { bluez = try BlueZ.connect() } catch let error as BlueZError { throw CLIFailure.from(bluez: error) }
        let watch = Watch(transport: BlueZTransport(bluez: bluez, address: address.uppercased(), adapter: options.adapter))
        logger.info("using \(address) over BlueZ")
        return DeviceSession(store: store, watch: watch, watchId: address.uppercased(), logger: logger, simulator: nil, simulatorPath: nil)
    }

    static func openStore(_ options: ConnectionOptions) throws -> GatewayStore {
        do {
            return try GatewayStore(path: options.databasePath)
        } catch {
            throw CLIFailure("\(error) (choose another file with --db PATH)", status: .ioError)
        }
    }

    /// Connects and records the watch in the store.
    @discardableResult
    func connect() async throws -> DeviceInfo {
        let info = try await watch.connect()
        try await store.saveWatch(id: watchId, name: simulator != nil ? "Simulated watch" : nil, info: info)
        let mtu = await watch.mtu?.value ?? 0
        let timings = await watch.connectTimings
        func milliseconds(_ duration: Duration?) -> String { duration.map { "\(Int(($0 / .milliseconds(1)).rounded())) ms" } ?? "–" }
        logger.info("connected to \(info.model) firmware \(info.firmware), MTU \(mtu); link open after \(milliseconds(timings.linkOpen)), first byte after \(milliseconds(timings.firstByte))")
        return info
    }

    /// Disconnects and saves what the simulated watch now remembers.
    func finish() async throws {
        await watch.disconnect()
        if let simulator, let simulatorPath {
            let state = await simulator.state
            var memory = try SimulatedWatchMemory.load(from: simulatorPath)
            memory.alarms = state.alarms
            memory.monitors = state.monitors
            try memory.save(to: simulatorPath)
        }
    }

    /// With the simulated watch: a task that edits its first alarm as a person would on the
    /// wrist, every `period`. Nil for a real watch.
    func startSimulatedWatchSideEdits(every period: Duration) -> Task<Void, Never>? {
        guard let simulator else { return nil }
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                if Task.isCancelled { return }
                await simulator.nudgeFirstAlarmOnWatch()
            }
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

/// The simulated watch's clock (TSGATEWAY_SIMULATOR_NOW pins it).
func simulatorNow() -> Date { SimulatorClock.now() }

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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = URL(fileURLWithPath: path)
        try encoder.encode(self).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}

extension CLIFailure {
    /// The exit status and message for an error from the lower layers.
    static func from(_ error: any Error) -> CLIFailure {
        switch error {
        case let failure as CLIFailure: return failure
        case let mistake as AlarmTextError: return CLIFailure(mistake.message, status: .usage)
        case let bluezError as BlueZError: return CLIFailure.from(bluez: bluezError)
        case let watchError as WatchError:
            let status: ExitStatus = switch watchError {
            case let .connectFailed(reason) where reason.contains("no device"): .deviceNotFound
            case .notConnected, .connectFailed, .disconnected: .unavailable
            case .timeout, .transferAbandoned: .timeout
            case .rejected, .protocolViolation: .protocolError
            case .invalidAlarms, .invalidMonitorConfig: .dataError
            case .unsupported: .dataError
            }
            return CLIFailure(watchError.description, status: status)
        case StoreError.busy: return CLIFailure(String(describing: error), status: .timeout)
        case let storeError as StoreError: return CLIFailure(storeError.description, status: .ioError)
        case is CancellationError: return CLIFailure("interrupted", status: .failure)
        default: return CLIFailure(String(describing: error), status: .software)
        }
    }
}
