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

/// `serve` sets a watch's clock only from a system clock it trusts (`ClockTrust`), with the
/// evidence made up by the test (`FixedClockEvidence`): the host's clock, kernel and buses are
/// not looked at.
@Suite("serve's clock discipline")
struct ClockDisciplineTests {
    final class Events: Sendable {
        private let list = Mutex<[GatewayEvent]>([])
        func append(_ event: GatewayEvent) { list.withLock { $0.append(event) } }
        /// The `clock` events so far: trusted or not.
        var clock: [Bool] { list.withLock { $0.compactMap { if case let .clock(trusted, _) = $0.kind { trusted } else { nil } } } }
        var syncs: Int { list.withLock { $0.filter { $0.type == .sleepSynced }.count } }
    }

    struct Serving {
        let supervisor: WatchSupervisor
        let simulator: SimulatedWatch
        let events: Events
        let running: Task<Void, Never>
        let directory: URL

        func stop() async {
            running.cancel()
            await running.value
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A supervisor serving a simulated protocol v1 watch, the clock judged on `evidence`.
    func serve(_ evidence: FixedClockEvidence, syncInterval: Duration = .seconds(3600)) throws -> Serving {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-clock-\(UUID().uuidString.prefix(8))")
        let path = directory.appendingPathComponent("db.sqlite").path
        let store = try GatewayStore(path: path)
        var settings = GatewayConfiguration(database: path)
        settings.clockCheckInterval = .milliseconds(100)
        settings.syncInterval = syncInterval
        settings.firstSyncDays = 2
        settings.reconnectMinimum = .seconds(600)
        settings.reconnectMaximum = .seconds(600)
        let simulator = SimulatedWatch(state: SimulatorState())
        let events = Events()
        let logger = Logger(label: "test")
        let supervisor = WatchSupervisor(entry: .init(address: WatchID("00:00:5E:00:54:97")!, name: "wrist"),
                                         transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)), store: store, settings: settings,
                                         clock: ClockDiscipline(source: evidence, logger: logger), logger: logger, publish: events.append)
        return Serving(supervisor: supervisor, simulator: simulator, events: events, running: Task { await supervisor.run() }, directory: directory)
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(within seconds: Double, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return await condition()
    }

    @Test("unsynchronised at start, then synchronised: the watch's clock and the scheduled sync wait, said once, then both happen")
    func unsynchronisedThenSynchronised() async throws {
        // A Pi at boot: timesyncd runs and has not answered; the clock is after every floor.
        let evidence = FixedClockEvidence(ClockEvidence(kernelSynchronized: false, timeSync: .waiting(service: "systemd-timesyncd"), now: Date()))
        let serving = try serve(evidence)
        let supervisor = serving.supervisor
        let connected = await Self.eventually(within: 60) { supervisor.status.connected }
        try #require(connected, "the supervisor did not connect in 60 s")
        // Many looks at the clock (every 100 ms) while it is not trusted.
        try await Task.sleep(for: .seconds(1.5))
        #expect(await serving.simulator.timeSets == 0, "the watch's clock was set from an unsynchronised system clock")
        #expect(await serving.simulator.state.utcOffset == nil)
        #expect(serving.events.syncs == 0 && supervisor.status.lastSync == nil, "the scheduled sync ran on an untrusted clock")
        #expect(serving.events.clock == [false], "said once: \(serving.events.clock)")
        #expect(supervisor.status.clockHeld?.contains("is not synchronised yet (systemd-timesyncd runs") == true, "\(supervisor.status.clockHeld ?? "nil")")

        // Asked for, a sync up to "now" is refused with the reason (exit 75 through the CLI); one with its end given runs.
        let refusal = await #expect(throws: CategorizedFailure.self) { _ = try await supervisor.syncSleep(SyncRequest()) }
        #expect(refusal?.category == .timeout && refusal?.message.contains("a sync up to now waits until the clock is trusted") == true)
        let now = Int64(Date().timeIntervalSince1970)
        _ = try await supervisor.syncSleep(SyncRequest(from: now - 86_400, to: now))

        // NTP answers.
        evidence.set { $0.kernelSynchronized = true }
        let released = await Self.eventually(within: 60) { await serving.simulator.timeSets == 1 && serving.events.syncs == 2 }
        #expect(released, "the watch's clock and the sync did not follow the synchronised clock")
        #expect(serving.events.clock == [false, true])
        #expect(supervisor.status.clockHeld == nil)
        await serving.stop()
    }

    @Test("the evidence's clock stepped forward and back while serving (the wall clock read stays: ClockStepTests steps that one): still trusted, nothing held, the watch's clock not set again, syncs go on")
    func steppedWhileServing() async throws {
        let start = Date()
        let evidence = FixedClockEvidence(ClockEvidence(kernelSynchronized: true, timeSync: .synchronized(service: "systemd-timesyncd"), now: start))
        let serving = try serve(evidence, syncInterval: .milliseconds(300))
        let supervisor = serving.supervisor
        let first = await Self.eventually(within: 60) { await serving.simulator.timeSets == 1 && serving.events.syncs >= 1 }
        try #require(first, "the supervisor did not set the clock and sync in 60 s")
        var syncs = serving.events.syncs
        for step in [365 * 86_400.0, -2 * 365 * 86_400.0] {
            evidence.set { $0.now = start + step; $0.newestStamp = start }
            let more = await Self.eventually(within: 60) { serving.events.syncs >= syncs + 2 }
            #expect(more, "scheduled syncs stopped after a step of \(step) s")
            syncs = serving.events.syncs
        }
        #expect(await serving.simulator.timeSets == 1, "a step reset the watch's clock schedule")
        #expect(serving.events.clock.isEmpty && supervisor.status.clockHeld == nil)
        await serving.stop()
    }
}
