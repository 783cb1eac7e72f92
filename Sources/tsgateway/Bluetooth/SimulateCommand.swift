import ArgumentParser
import Foundation
import TSBlueZ
import TSModels
import TSSimulator

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the simulated watch as a real Bluetooth LE peripheral on an adapter.",
        discussion: """
            Registers the watch's GATT service and an LE advertisement with BlueZ, so another \
            adapter (or computer) can scan, pair and sync with it. Runs until interrupted.

            Example (two adapters on one machine):
              tsgateway simulate --adapter hci1 &
              tsgateway scan --adapter hci0
            """)
    @Option(help: ArgumentHelp("The adapter to advertise on.", valueName: "hciN"))
    var adapter: String
    @Option(help: "Days of generated sleep history.")
    var days: Int = 90
    @Option(help: "Seed of the generated data.")
    var seed: UInt64 = 20_251_119
    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Int?

    func validate() throws {
        guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else { throw ValidationError("--adapter must look like hci1; got \"\(adapter)\"") }
        guard (1...3650).contains(days) else { throw ValidationError("--days must be 1…3650") }
    }

    func run() async throws {
        try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            let now = Date()
            let records = SleepDataGenerator(seed: seed, timeZone: .current).records(days: days, lastMorning: now, notAfter: now)
            let peripheral = SimulatorPeripheral(bluez: bluez, simulator: SimulatedWatch(state: SimulatorState(records: records)), adapter: found)
            try await peripheral.start()
            print("simulated watch advertising on \(found.name) (\(found.address)) with \(records.count) sleep records; Ctrl-C stops it")
            fflush(nil)
            await Self.waitForStop(duration: duration)
            await peripheral.stop()
            print("stopped")
        }
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
