import Foundation
import TSBlueZ
import TSBlueZTransport
import TSDevice
import TSModels
import TSNpkSimulator
import TSProtocol
import TSQRingSimulator
import TSSimulator
import TSTransport

/// How the gateway reaches one watch.
public enum WatchLinkDescription: Sendable {
    /// A real watch over BlueZ.
    case bluetooth(BluetoothLink, bluez: BlueZ)
    /// The simulated watch, in-process.
    case simulated(SimulatedWatchOptions)
    /// A recorded capture played back (protocol v1).
    case replay([CaptureEntry])
    /// A link the caller made (a test's own peripheral, a tool).
    case transport(any WatchTransport)
}

/// The simulated watch: its history, its memory and the link's faults. The CLI's `--simulate`
/// and a `simulated: true` watch of `tsgateway serve` are this one watch with their options.
public struct SimulatedWatchOptions: Sendable {
    public var seed: UInt64 = 20_251_119
    public var timeZone: TimeZone = .current
    /// Days of sleep history up to `now`.
    public var historyDays = 30
    public var now: Date = SimulatorClock.now()
    public var alarms: [Alarm] = [.simulatorDefault]
    public var monitors: [MonitorConfig] = []
    public var protocolVersion: SimulatedProtocol = .version1_1
    /// Protocol v1's service; false: a band with the standard services only.
    public var protocolV1 = true
    /// Device Information, Battery, Current Time and Heart Rate beside protocol v1.
    public var standardServices = true
    public var packetDelay: Duration = .zero
    public var disconnectEvery: Int?
    /// The live night the daemon plays: stage events this far apart, heart rate this often.
    public var liveStageInterval: Duration?
    public var heartRateInterval: Duration = .seconds(1)
    /// What the wearer of the simulated NPK watch does when it asks to confirm a bind.
    public var npkWearer: SimulatedWearer = .confirm

    public init() {}
}

/// A watch opened in its dialect, with the simulator behind it when it is simulated.
public struct OpenedWatch: Sendable {
    public var central: any WatchCentral
    /// The BlueZ link of a real watch; nil otherwise.
    public var bluetooth: BluetoothLink?
    public var simulator: SimulatedWatch?
    /// The simulated TopStep watch, when the simulated watch speaks NPK.
    public var simulatedNpk: SimulatedNpkWatch?
    /// The simulated QRing ring, when the simulated watch speaks QRing.
    public var simulatedRing: SimulatedRing?
    public var simulatedStandard: SimulatedStandardServices?
    /// The simulated watch's live night (stages and heart rate while connected).
    public var simulatedNight: SimulatedNight?
    /// How many sleep records the simulated watch holds.
    public var simulatedRecords = 0
}

/// The one place a watch is opened: the CLI, `pair` and `tsgateway serve` describe the link
/// and get the central of its dialect.
public enum WatchOpener {
    /// Opens nothing yet (the central connects when asked); chooses the dialect: the one asked
    /// for (`dialect:` in the configuration, `--dialect`), else the one the link implies (a
    /// simulated band speaks `standard`, a capture v1), else protocol v1's central, which serves
    /// a watch found without its service through the standard services (the GATT services decide).
    public static func open(_ link: WatchLinkDescription, dialect asked: Dialect? = nil, configuration: WatchConfiguration = WatchConfiguration(),
                            onStep: (@Sendable (BlueZTransport.OpenStep) -> Void)? = nil) throws -> OpenedWatch {
        let chosen = try asked.map { name throws(DialectError) in try WatchDialects.named(name) }
        switch link {
        case let .bluetooth(bluetooth, bluez):
            let dialect = chosen ?? .protocolV1
            var transport = BlueZTransport(bluez: bluez, address: bluetooth.address, adapter: bluetooth.adapter, profile: dialect.gatt)
            transport.onStep = onStep
            return OpenedWatch(central: dialect.makeCentral(transport, configuration), bluetooth: bluetooth)
        case let .simulated(options):
            let implied: WatchDialect = options.protocolV1 ? .protocolV1 : .standardServices
            let dialect = chosen ?? implied
            if dialect.name == .npk { return try openSimulatedNpk(options, dialect: dialect, configuration: configuration) }
            if dialect.name == .qring { return try openSimulatedRing(options, dialect: dialect, configuration: configuration) }
            guard dialect.name == .protocolV1 || dialect.name == .standard else {
                throw CategorizedFailure(.invalidInput, "the simulated watch speaks \(Dialect.protocolV1), \(Dialect.standard), \(Dialect.npk) or \(Dialect.qring), not \(dialect.name)")
            }
            let records = SleepDataGenerator(seed: options.seed, timeZone: options.timeZone)
                .records(days: options.historyDays, lastMorning: options.now, notAfter: options.now)
            let simulator = SimulatedWatch(configuration: options.protocolVersion.configuration,
                                           state: SimulatorState(alarms: options.alarms, monitors: options.monitors, records: records))
            let standard = options.standardServices ? SimulatedStandardServices() : nil
            let transport = LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247),
                                              faults: FaultInjection(delay: options.packetDelay, disconnectEvery: options.disconnectEvery),
                                              standard: standard, hasProtocolV1: options.protocolV1 && dialect.name == .protocolV1)
            let night = SimulatedNight(simulator: simulator, interval: options.liveStageInterval, standard: standard,
                                       heartRateInterval: options.heartRateInterval)
            return OpenedWatch(central: dialect.makeCentral(transport, configuration), simulator: simulator, simulatedStandard: standard,
                               simulatedNight: night, simulatedRecords: records.count)
        case let .replay(capture):
            return OpenedWatch(central: (chosen ?? .protocolV1).makeCentral(ReplayTransport(capture: capture), configuration))
        case let .transport(transport):
            return OpenedWatch(central: (chosen ?? .protocolV1).makeCentral(transport, configuration))
        }
    }

    /// The dialect of a watch over BlueZ by `DialectResolution`'s rules; the GATT services are
    /// the UUIDs BlueZ lists for the device (it knows them from advertisements or an earlier
    /// connect; a device BlueZ has not seen offers none, and protocol v1's central decides once
    /// connected).
    public static func resolveDialect(for link: BluetoothLink, bluez: BlueZ, asked: Dialect?, remembered: Dialect?) async throws
        -> (dialect: WatchDialect, reason: DialectResolution.Reason) {
        var services: [String] = []
        if asked == nil && remembered == nil {
            services = (try? await bluez.serviceUUIDs(address: link.address, adapter: link.adapter)) ?? []
        }
        return try DialectResolution.resolve(asked: asked, remembered: remembered, serviceUUIDs: services)
    }

    /// The simulated TopStep watch over the loopback: the same nights, alarms as NPK holds them
    /// (no snooze, remark or smart window), and the heart rate it measured over its history.
    private static func openSimulatedNpk(_ options: SimulatedWatchOptions, dialect: WatchDialect, configuration: WatchConfiguration) throws -> OpenedWatch {
        let records = SleepDataGenerator(seed: options.seed, timeZone: options.timeZone)
            .records(days: options.historyDays, lastMorning: options.now, notAfter: options.now)
        let alarms = options.alarms.map { alarm in
            var held = alarm
            held.snoozeAllowed = false
            held.remark = ""
            held.smartWindow = 0
            return held
        }
        var watchConfiguration = SimulatedNpkWatch.Configuration()
        watchConfiguration.timeZone = options.timeZone
        watchConfiguration.bindAnswer = options.npkWearer.bindAnswer
        let now = Int64(options.now.timeIntervalSince1970)
        let heartRate = HeartRateHistoryGenerator(seed: options.seed)
            .samples(start: now - Int64(options.historyDays) * 86_400, end: now, records: records)
        let simulator = SimulatedNpkWatch(configuration: watchConfiguration, records: records, alarms: alarms, monitors: options.monitors,
                                          heartRate: heartRate)
        let transport = LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247),
                                          faults: FaultInjection(delay: options.packetDelay, disconnectEvery: options.disconnectEvery))
        return OpenedWatch(central: dialect.makeCentral(transport, configuration), simulatedNpk: simulator, simulatedRecords: records.count)
    }

    /// The simulated QRing ring over the loopback's two pairs: its own nights (a ring stages sleep
    /// itself) and heart-rate log from the same seed, no alarms.
    private static func openSimulatedRing(_ options: SimulatedWatchOptions, dialect: WatchDialect, configuration: WatchConfiguration) throws -> OpenedWatch {
        let history = RingHistory(seed: options.seed, timeZone: options.timeZone, now: options.now, days: options.historyDays)
        let ring = SimulatedRing(history: history, monitors: options.monitors)
        let transport = LoopbackTransport(peripheral: ring, mtu: try ATTMTU(247),
                                          faults: FaultInjection(delay: options.packetDelay, disconnectEvery: options.disconnectEvery),
                                          standard: ring, name: ring.configuration.name, secondChannel: ring)
        return OpenedWatch(central: dialect.makeCentral(transport, configuration), simulatedRing: ring,
                           simulatedRecords: history.nights.reduce(0) { $0 + $1.items.count })
    }
}
