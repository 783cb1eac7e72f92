import ArgumentParser
import Foundation
import TSBlueZ
import TSFamilies
import TSFamilyKit
import TSDevice
import TSFiles
import TSModels
import TSSimulator

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run a simulated watch as a real Bluetooth LE peripheral on an adapter.",
        discussion: """
            Registers the watch's GATT services and an LE advertisement with BlueZ, so another \
            adapter (or computer) can scan, pair and sync with it. Each dialect's simulated device \
            is its family's (\(SimulatedFamilies.list)); options beyond the shared ones belong to \
            the dialects that take them. Protocol v1's watch serves the standard Device \
            Information, Battery and Heart Rate services beside its own; its heart rate follows \
            its last generated night, replayed a minute per beat while a central subscribes. \
            Runs until interrupted.

            Example (two adapters on one machine):
              tsgateway simulate --adapter hci1 &
                tsgateway scan --adapter hci0

            A night for `tsgateway serve` to follow (live stages every 5 s; smart wake):
              tsgateway simulate --adapter hci1 --live-stage-interval 5

            A TopStep watch speaking NPK (its service only; pair it with `--dialect npk`):
              tsgateway simulate --adapter hci1 --dialect npk --sleep-fault corrupt-day:3

            A QRing smart ring (R02_5A1C; its service names the dialect: pair it as it is):
              tsgateway simulate --adapter hci1 --dialect qring --ring-fault wrong-crc

            A Huami band whose answers reach the central before its writes' responses:
              tsgateway simulate --adapter hci1 --dialect huami --answer-timing before-response

            A ring whose every answer comes 3 s late (any dialect takes --answer-timing):
              tsgateway simulate --adapter hci1 --dialect qring --answer-timing late:3000
            """)
    @Option(help: ArgumentHelp("The adapter to advertise on.", valueName: "hciN"))
    var adapter: String
    @Option(help: ArgumentHelp("The dialect the watch speaks: \(SimulatedFamilies.list).", valueName: "dialect"), transform: DialectChoice.parse)
    var dialect: Dialect = Dialect.fallback
    @Option(help: "Days of generated sleep history.")
    var days: Int = 90
    @Option(help: "Seed of the generated data.")
    var seed: UInt64 = 20_251_119
    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Int?
    @Option(help: ArgumentHelp("Write the generated sleep records (the ground truth a sync must reproduce) as JSON to this file.", valueName: "path"))
    var groundTruth: String?
    @Option(name: [.customLong("fault"), .customLong("sleep-fault"), .customLong("ring-fault")],
            help: ArgumentHelp("Fault injection, in the order given (--sleep-fault and --ring-fault are other names of it): \(SimulatedFamilies.faults).", valueName: "fault"))
    var fault: [String] = []
    @Option(help: ArgumentHelp("v1: drop the link from the watch's side once, after the central has acknowledged this many sleep pages.", valueName: "pages"))
    var dropLinkAfterPages: Int?
    @Option(name: .customLong("protocol"), help: ArgumentHelp("v1: the protocol the watch speaks: \(SimulatedProtocol.choices).", valueName: "version"))
    var protocolVersion: String?
    @Flag(help: "v1: serve protocol v1 only: leave out Device Information, Battery and Heart Rate.")
    var noStandardServices = false
    @Option(help: ArgumentHelp("v1: play a live night: a sleep stage every this many seconds to a central that subscribed to live stages (the watch's own smart wake follows them too).", valueName: "seconds"))
    var liveStageInterval: Int?
    @Option(help: .hidden)
    var advertiseService: String?
    @Option(help: ArgumentHelp("NPK: how long the watch's notifications are, mtu-3 or mtu-5 of the ATT MTU BlueZ reports (default mtu-5).", valueName: "size"))
    var notificationSize: String?
    @Flag(help: "NPK: keep a heart-rate history (a reading every 5 minutes and manual ones, as the in-process watch of the same seed) for sync type 1; without it the watch has none.")
    var heartRateHistory = false
    @Option(help: ArgumentHelp("QRing: write the heart-rate log the ring holds (at its starting interval) as JSON to this file.", valueName: "path"))
    var heartRateTruth: String?
    @Option(help: ArgumentHelp("QRing: write the steps the ring holds for today (its clock: the day, then each quarter-hour's steps, calories and distance; what a steps request for today answers) as JSON to this file.", valueName: "path"))
    var stepsTruth: String?
    @Option(help: ArgumentHelp("Every dialect: when the device's answer to a write goes out: immediate (from its write handler; bluetoothd acknowledges the write first), before-response (from its write handler, the write acknowledged after it, for a central that writes requests), late (2.5 s after it was made, the write long acknowledged) or late:MS.", valueName: "timing"))
    var answerTiming: String?

    var settings: SimulateSettings {
        var settings = SimulateSettings()
        settings.days = days
        settings.seed = seed
        settings.groundTruth = groundTruth
        settings.dropLinkAfterPages = dropLinkAfterPages
        settings.protocolVersion = protocolVersion
        settings.noStandardServices = noStandardServices
        settings.liveStageInterval = liveStageInterval
        settings.advertiseService = advertiseService
        settings.faults = fault
        settings.notificationSize = notificationSize
        settings.heartRateHistory = heartRateHistory
        settings.heartRateTruth = heartRateTruth
        settings.stepsTruth = stepsTruth
        settings.answerTiming = answerTiming
        return settings
    }

    func validate() throws {
        guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else { throw ValidationError("--adapter must look like hci1; got \"\(adapter)\"") }
        guard (1...3650).contains(days) else { throw ValidationError("--days must be 1…3650") }
        let family = try WatchFamilies.named(dialect)
        if let problem = WatchFamilies.problem(with: settings, for: family) { throw ValidationError(problem.description) }
    }

    func run() async throws {
        let family = try WatchFamilies.named(dialect)
        guard let peripheral = family.peripheral else { throw CLIFailure("--dialect \(dialect) has no simulated peripheral", status: .usage) }
        let settings = settings
        let duration = duration
        try await withBlueZ { bluez in
            var found = try await bluez.adapter(adapter)
            if !found.powered {
                try await bluez.setPowered(true, adapter: found)
                found = try await bluez.adapter(adapter)
                print("powered on \(found.name)")
            }
            let session = PeripheralSession(
                bluez: bluez, adapter: found, settings: settings, now: simulatorNow(),
                say: { line in print(line); fflush(nil) },
                writePrivate: { data, path in try PrivateFile.write(data, to: path) },
                onSignal: { number, action in Self.onSignal(number, action) },
                waitForStop: { await Self.waitForStop(duration: duration) })
            try await peripheral.run(session)
        }
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

/// What `simulate --help` says of the families' simulated peripherals, from their registrations.
enum SimulatedFamilies {
    static var list: String { WatchFamilies.all.filter { $0.peripheral != nil }.map(\.name.rawValue).joined(separator: ", ") }

    static var faults: String {
        WatchFamilies.all.compactMap { family in
            family.peripheral.flatMap { $0.faultKinds.isEmpty ? nil : "\(family.name): \($0.faultKinds)" }
        }.joined(separator: "; ")
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
