import Foundation
import Logging
import Synchronization
import TSGATT
@testable import TSGatewayAPI
@testable import TSGatewayService
import TSModels
import TSProtocol
import TSSimulator
import TSStore
import TSTransport
import TSWatchService
import Testing

/// The wall clock `serve` reads stepped forward and back while it serves a simulated watch (NTP's
/// first answer, a clock set by hand): the test's own wall clock (`WallClock`), the real one plus
/// an offset it steps; the host's clock is not touched. The watch keeps its own clock: the time
/// the gateway last set, running on.
@Suite("serve with a wall clock stepped while serving")
struct ClockStepTests {
    /// The real clock plus an offset the test steps.
    final class SteppedClock: Sendable {
        private let offset = Mutex<TimeInterval>(0)
        func step(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
        var shift: TimeInterval { offset.withLock { $0 } }
        var now: Date { Date() + shift }
        var wallClock: WallClock { WallClock { self.now } }
    }

    /// NTP has synchronised the clock; `now` is the stepped clock's.
    struct SynchronisedEvidence: ClockEvidenceSource {
        let clock: SteppedClock
        func evidence() async throws -> ClockEvidence {
            ClockEvidence(kernelSynchronized: true, timeSync: .synchronized(service: "systemd-timesyncd"), now: clock.now)
        }
    }

    final class Syncs: Sendable {
        private let times = Mutex<[(event: Date, monotonic: ContinuousClock.Instant)]>([])
        func append(_ event: GatewayEvent) {
            guard event.type == .sleepSynced else { return }
            times.withLock { $0.append((event.time, ContinuousClock.now)) }
        }
        var all: [(event: Date, monotonic: ContinuousClock.Instant)] { times.withLock { $0 } }
        func since(_ instant: ContinuousClock.Instant) -> [(event: Date, monotonic: ContinuousClock.Instant)] { all.filter { $0.monotonic >= instant } }
    }

    static let watchId = WatchID("00:00:5E:00:54:98")!

    @Test("stepped +2 h then −1 h: syncs keep their cadence, the cursor never goes back, every record the watch made is stored once, the watch's clock follows, sync times are the stepped clock's")
    func steppedForwardAndBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-step-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let store = try GatewayStore(path: path)
        let interval = Duration.milliseconds(300)
        var settings = GatewayConfiguration(database: path)
        settings.clockCheckInterval = .milliseconds(100)
        settings.syncInterval = interval
        settings.firstSyncDays = 2
        settings.reconnectMinimum = .seconds(600)
        settings.reconnectMaximum = .seconds(600)
        let clock = SteppedClock()
        let simulator = SimulatedWatch(state: SimulatorState())
        let syncs = Syncs()
        let logger = Logger(label: "test")
        let supervisor = WatchSupervisor(entry: .init(address: Self.watchId, name: "wrist"),
                                         transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)), store: store, settings: settings,
                                         clock: ClockDiscipline(source: SynchronisedEvidence(clock: clock), logger: logger),
                                         wallClock: clock.wallClock, logger: logger, publish: syncs.append)
        let running = Task { await supervisor.run() }
        // The cursor as the store holds it, looked at all along.
        let cursors = Mutex<[Int64]>([])
        let watching = Task {
            while !Task.isCancelled {
                if let cursor = try? await store.syncCursor(watch: Self.watchId) { cursors.withLock { $0.append(cursor.upTo) } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }

        let first = await ClockDisciplineTests.eventually(within: 60) { await simulator.timeSets == 1 && syncs.all.count >= 1 }
        try #require(first, "the supervisor did not set the watch's clock and sync in 60 s")
        // The watch's clock: the wall clock's when the gateway last set it, running on.
        var watchShift = clock.shift
        var made: [SleepItem] = []
        /// The wearer sleeps a little: records the watch stamps with its own clock, made after it was last set.
        func watchRecords() async throws {
            try await Task.sleep(for: .seconds(4))
            let watchNow = Int64((Date() + watchShift).timeIntervalSince1970)
            let new = (1...3).map { SleepItem(stage: .light, start: watchNow - 4 + $0, duration: 1) }
            made += new
            await simulator.replaceRecords(await simulator.state.records + new)
        }
        func allStored() async -> Bool {
            let stored = (try? await store.sleepRecords(watch: Self.watchId, start: 0, end: .max)) ?? []
            return Set(made.map(\.start)).isSubset(of: Set(stored.map(\.start)))
        }
        try await watchRecords()
        try #require(await ClockDisciplineTests.eventually(within: 30) { await allStored() }, "the records before any step were not stored")

        for step in [2 * 3600.0, -3600.0] {
            let sets = await simulator.timeSets
            let stepped = ContinuousClock.now
            clock.step(by: step)
            // The watch's clock was set from the clock before the step: it is set again.
            let followed = await ClockDisciplineTests.eventually(within: 90) { await simulator.timeSets > sets }
            try #require(followed, "the watch's clock was not set again after a step of \(Int(step)) s: it stays \(Int(-step)) s off, and stamps the night with it")
            watchShift = clock.shift
            try await watchRecords()
            let stored = await ClockDisciplineTests.eventually(within: 30) { await allStored() }
            #expect(stored, "records the watch made after a step of \(Int(step)) s (its clock set again) were not stored: the sync asked only from the cursor")

            // The monotonic cadence: no burst after a step forward, no stall after a step back.
            try await Task.sleep(for: .seconds(3))
            let after = syncs.since(stepped)
            let elapsed = (ContinuousClock.now - stepped) / interval
            #expect(after.count >= 3 && Double(after.count) <= elapsed + 3, "\(after.count) syncs in the \(elapsed) intervals after a step of \(Int(step)) s")
            // What the syncs report is stamped with the wall clock after the step, not the one before.
            let lastSync = try #require(supervisor.status.lastSync)
            #expect(abs(lastSync.timeIntervalSince(clock.now)) < 10, "last sync \(lastSync) against a wall clock at \(clock.now)")
            // Each sync's time against the stepped clock when it was announced.
            #expect(after.allSatisfy { abs($0.event.timeIntervalSince(clock.now - (ContinuousClock.now - $0.monotonic).timeInterval)) < 5 },
                    "a sync after a step of \(Int(step)) s stamped with the clock before it")
            // The records the watch made since its clock was set again (those before the step back
            // were stamped by the clock then, an hour ahead of this one).
            let newest = try #require(made.suffix(3).map(\.start).max())
            #expect(Int64(lastSync.timeIntervalSince1970) >= newest, "the last sync (\(lastSync)) is stamped before a record it reports (\(newest))")
        }

        watching.cancel()
        running.cancel()
        await running.value
        let stored = try await store.sleepRecords(watch: Self.watchId, start: 0, end: .max)
        #expect(stored.count == made.count && Set(stored.map(\.start)) == Set(made.map(\.start)),
                "stored \(stored.count) records, the watch made \(made.count)")
        let upTos = cursors.withLock { $0 }
        #expect(!upTos.isEmpty && zip(upTos, upTos.dropFirst()).allSatisfy { $0 <= $1 }, "the cursor went back: \(upTos)")
    }
}
