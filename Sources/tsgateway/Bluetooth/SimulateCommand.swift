import ArgumentParser
import Foundation
import TSBlueZ
import TSDevice
import TSModels
import TSNpkSimulator
import TSProtocol
import TSQRingSimulator
import TSSimulator
import TSSimulatorPeripheral

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the simulated watch as a real Bluetooth LE peripheral on an adapter.",
        discussion: """
            Registers the watch's GATT services and an LE advertisement with BlueZ, so another \
            adapter (or computer) can scan, pair and sync with it. Beside protocol v1 it serves \
            the standard Device Information, Battery and Heart Rate services; its heart rate \
            follows its last generated night, replayed a minute per beat while a central \
            subscribes. Runs until interrupted.

            Example (two adapters on one machine):
              tsgateway simulate --adapter hci1 &
                tsgateway scan --adapter hci0

            A night for `tsgateway serve` to follow (live stages every 5 s; smart wake):
              tsgateway simulate --adapter hci1 --live-stage-interval 5

            A TopStep watch speaking NPK (its service only; pair it with `--dialect npk`):
              tsgateway simulate --adapter hci1 --dialect npk --sleep-fault corrupt-day:3

            A QRing smart ring (R02_5A1C; its service names the dialect: pair it as it is):
              tsgateway simulate --adapter hci1 --dialect qring --ring-fault wrong-crc
            """)
    @Option(help: ArgumentHelp("The adapter to advertise on.", valueName: "hciN"))
    var adapter: String
    @Option(help: "Days of generated sleep history.")
    var days: Int = 90
    @Option(help: "Seed of the generated data.")
    var seed: UInt64 = 20_251_119
    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Int?
    @Option(help: ArgumentHelp("Write the generated sleep records (the ground truth a sync must reproduce) as JSON to this file.", valueName: "path"))
    var groundTruth: String?
    @Option(help: ArgumentHelp("Fault injection: drop the link from the watch's side once, after the central has acknowledged this many sleep pages.", valueName: "pages"))
    var dropLinkAfterPages: Int?
    @Option(name: .customLong("protocol"), help: ArgumentHelp("The protocol the watch speaks: \(SimulatedProtocol.choices).", valueName: "version"))
    var protocolVersion: String = SimulatedProtocol.version1_1.rawValue
    @Flag(help: "Serve protocol v1 only: leave out Device Information, Battery and Heart Rate.")
    var noStandardServices = false
    @Option(help: ArgumentHelp("Play a live night: a sleep stage every this many seconds to a central that subscribed to live stages (the watch's own smart wake follows them too).", valueName: "seconds"))
    var liveStageInterval: Int?
    @Option(help: .hidden)
    var advertiseService: String?
    @Option(help: ArgumentHelp("The dialect the watch speaks: \(Dialect.protocolV1), \(Dialect.npk) or \(Dialect.qring).", valueName: "dialect"), transform: DialectChoice.parse)
    var dialect: Dialect = .protocolV1
    @Option(help: ArgumentHelp("NPK fault injection, once per sleep sync in the order given: corrupt-day:N, drop-day:N, swap-days:N (day N, from 0, after day N+1), lose-link-after-days:N.", valueName: "fault"),
            transform: NpkSleepFaultChoice.parse)
    var sleepFault: [SimulatedNpkWatch.SleepFault] = []
    @Option(help: ArgumentHelp("NPK: how long the watch's notifications are, \(NpkNotificationChunking.allCases.map(\.rawValue).joined(separator: " or ")) of the ATT MTU BlueZ reports.", valueName: "size"))
    var notificationSize: NpkNotificationChunking = .multipleNotificationEntry
    @Flag(help: "NPK: keep a heart-rate history (a reading every 5 minutes and manual ones, as the in-process watch of the same seed) for sync type 1; without it the watch has none.")
    var heartRateHistory = false
    @Option(help: ArgumentHelp("QRing fault injection, each once, to the next answer it concerns: \(RingFaultChoice.kinds).", valueName: "fault"),
            transform: RingFaultChoice.parse)
    var ringFault: [SimulatedRing.Fault] = []
    @Option(help: ArgumentHelp("QRing: write the heart-rate log the ring holds (at its starting interval) as JSON to this file.", valueName: "path"))
    var heartRateTruth: String?
    @Option(help: ArgumentHelp("QRing: write the steps the ring holds for today (its clock: the day, then each quarter-hour's steps, calories and distance; what a steps request for today answers) as JSON to this file.", valueName: "path"))
    var stepsTruth: String?

    func validate() throws {
        guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else { throw ValidationError("--adapter must look like hci1; got \"\(adapter)\"") }
        guard (1...3650).contains(days) else { throw ValidationError("--days must be 1…3650") }
        if let dropLinkAfterPages, dropLinkAfterPages < 1 { throw ValidationError("--drop-link-after-pages must be 1 or more") }
        if SimulatedProtocol(text: protocolVersion) == nil { throw ValidationError("--protocol must be \(SimulatedProtocol.choices); got \"\(protocolVersion)\"") }
        if let liveStageInterval, !(1...3600).contains(liveStageInterval) { throw ValidationError("--live-stage-interval must be 1…3600 seconds; got \(liveStageInterval)") }
        try validateDialect()
    }

    func run() async throws {
        if dialect == .npk { return try await runNpk() }
        if dialect == .qring { return try await runRing() }
        try await withBlueZ { bluez in
            var found = try await bluez.adapter(adapter)
            if !found.powered {
                try await bluez.setPowered(true, adapter: found)
                found = try await bluez.adapter(adapter)
                print("powered on \(found.name)")
            }
            let now = simulatorNow()
            let records = SleepDataGenerator(seed: seed, timeZone: .current).records(days: days, lastMorning: now, notAfter: now)
            if let groundTruth { try Self.write(records, to: groundTruth) }
            let spoken = SimulatedProtocol(text: protocolVersion) ?? .version1_1
            let simulator = SimulatedWatch(configuration: spoken.configuration, state: SimulatorState(records: records))
            await simulator.onAlarmAlert { alert in
                print("alarm in slot \(alert.slot): \(alert.kind.rawValue) (\(alert.trigger.rawValue))" + (alert.kind == .snoozed ? " for \(alert.snoozeMinutes) minutes" : ""))
                fflush(nil)
            }
            // The alarm clock runs on the wall clock; with --live-stage-interval the night plays beside it.
            let night = SimulatedNight(simulator: simulator, interval: liveStageInterval.map { .seconds($0) })
            let alarmClock = Task { await night.play() }
            let standard = noStandardServices ? nil : SimulatedStandardServices()
            let peripheral = SimulatorPeripheral(bluez: bluez, simulator: simulator, adapter: found,
                                                 advertisedService: advertiseService ?? WatchGATT.service, dropLinkAfterPages: dropLinkAfterPages,
                                                 standard: standard, night: NightReplay(records: records))
            peripheral.report = { line in print(line); fflush(nil) }
            try await peripheral.start()
            let served = standard == nil ? "protocol v1 only" : "protocol v1, Device Information, Battery, Heart Rate"
            print("simulated watch advertising on \(found.name) (\(found.address)), service \(advertiseService ?? WatchGATT.service), protocol \(spoken.rawValue), with \(records.count) sleep records; serves \(served); Ctrl-C stops it, SIGUSR1 edits an alarm on the watch, SIGUSR2 dismisses a ringing alarm")
            fflush(nil)
            let edits = Self.onSignal(SIGUSR1) {
                await simulator.nudgeFirstAlarmOnWatch()
                print("watch-side alarm edit sent"); fflush(nil)
            }
            let dismissals = Self.onSignal(SIGUSR2) { await simulator.dismissRinging(at: Date()) }
            await Self.waitForStop(duration: duration)
            edits.cancel()
            dismissals.cancel()
            alarmClock.cancel()
            await peripheral.stop()
            let statistics = await simulator.statistics
            print("\(statistics.connections) connections: \(statistics.framesReceived) frames received (\(statistics.corruptFramesReceived) corrupt), \(statistics.pagesSent) sleep pages sent (\(statistics.pagesResent) resent)")
            print("stopped")
        }
    }

    static func write(_ records: [SleepItem], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFile.write(try encoder.encode(records), to: path)
    }

    /// Runs `action` each time the process receives `number`, until the task is cancelled.
    static func onSignal(_ number: Int32, _ action: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        source.setEventHandler { continuation.yield() }
        source.resume()
        SignalSources.keep([source])
        return Task { for await _ in stream { await action() } }
    }

    /// Returns after `duration` seconds, or on SIGINT / SIGTERM.
    static func waitForStop(duration: Int?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            var sources: [DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { if once.claim() { continuation.resume() } }
                source.resume()
                sources.append(source)
            }
            if let duration {
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(duration)) { if once.claim() { continuation.resume() } }
            }
            SignalSources.keep(sources)
        }
    }
}

/// True for the first caller only.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false
    func claim() -> Bool { lock.lock(); defer { lock.unlock() }; if claimed { return false }; claimed = true; return true }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var kept: [DispatchSourceSignal] = []
    static func keep(_ sources: [DispatchSourceSignal]) { kept += sources }
}
