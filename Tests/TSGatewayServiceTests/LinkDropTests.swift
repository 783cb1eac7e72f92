import Foundation
import GRDB
import Logging
import Synchronization
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulator
import TSStore
import TSTransport
import Testing
@testable import TSDevice
@testable import TSGatewayService

/// What the gateway received before a link dropped is in the store afterwards: the link's
/// cancellation does not reach a write under way.
@Suite("what was received is stored when the link drops")
struct LinkDropTests {
    /// A loopback link to the simulator that the test can drop from the watch's side, as a
    /// watch walking out of range does.
    final class DroppableTransport: WatchTransport {
        let loopback: LoopbackTransport
        private let current = Mutex<DroppableConnection?>(nil)
        /// Opens still to refuse, as with a watch out of range.
        let refusals = Mutex(0)
        let opened = Mutex(0)

        init(_ loopback: LoopbackTransport) { self.loopback = loopback }

        func open() async throws -> any TransportConnection {
            let refused = refusals.withLock { refusals -> Bool in
                guard refusals > 0 else { return false }
                refusals -= 1
                return true
            }
            if refused { throw TransportError.connectFailed("the watch is out of range (test)") }
            let connection = DroppableConnection(try await loopback.open())
            opened.withLock { $0 += 1 }
            current.withLock { $0 = connection }
            return connection
        }

        func dropLink() async {
            await current.withLock { $0 }?.drop(reason: "the watch went out of range (test)")
        }
    }

    final class DroppableConnection: TransportConnection {
        let inner: any TransportConnection
        let events: AsyncStream<TransportEvent>
        private let continuation: AsyncStream<TransportEvent>.Continuation

        init(_ inner: any TransportConnection) {
            self.inner = inner
            let (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self)
            self.events = events
            self.continuation = continuation
            Task {
                for await event in inner.events { continuation.yield(event) }
                continuation.finish()
            }
        }

        var mtu: ATTMTU { inner.mtu }
        var services: ServiceSet { inner.services }
        func write(_ chunk: [UInt8]) async throws { try await inner.write(chunk) }
        func close() async { await inner.close() }

        func drop(reason: String) async {
            continuation.yield(.disconnected(reason: reason))
            continuation.finish()
            await inner.close()
        }
    }

    /// Another connection (as another process has) holding the database's write lock, so that
    /// the gateway's writes are under way, waiting, when the link drops.
    final class WriteLockHolder: Sendable {
        let queue: DatabaseQueue

        init(path: String) throws {
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true  // the transaction stays open between calls
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        }

        func release() throws {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        }
    }

    /// The first element of `stream`, or nil after `seconds`.
    static func first<Element: Sendable>(of stream: AsyncStream<Element>, within seconds: Double) async -> Element? {
        await withTaskGroup(of: Element?.self) { group in
            group.addTask { for await element in stream { return element }; return nil }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(within seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    @Test("a link dropped while an alarm edit from the wrist and a live stage are being saved: both are in the store afterwards")
    func receivedBeforeTheDropIsStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-linkdrop-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let store = try GatewayStore(path: path)
        var settings = GatewayConfiguration(database: path)
        // No reconnect while the test looks: a reconnect reads the alarm table again (as `read`).
        settings.reconnectMinimum = .seconds(600)
        settings.reconnectMaximum = .seconds(600)
        let simulator = SimulatedWatch(state: SimulatorState(alarms: [Alarm(slot: 0, label: "Work", hour: 7, minute: 0)]))
        let transport = DroppableTransport(LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)))
        let entry = GatewayConfiguration.WatchEntry(address: WatchID("00:00:5E:00:54:99")!, name: "wrist")
        let supervisor = WatchSupervisor(entry: entry, transport: transport, store: store, settings: settings,
                                         logger: Logger(label: "test"), publish: { _ in })
        let running = Task { await supervisor.run() }
        defer { running.cancel() }
        // Connected, live stages subscribed and the first sync done: nothing else writes now.
        let ready = await Self.eventually(within: 120) { supervisor.status.lastSync != nil }
        try #require(ready, "the supervisor did not connect and sync in 120 s")

        // What the gateway receives, seen beside the supervisor.
        let alarmChanges = supervisor.watch.watchSideAlarmChanges()
        let liveStages = supervisor.watch.liveSleepStages()
        let lock = try WriteLockHolder(path: path)
        await simulator.editAlarmsOnWatch { $0.append(Alarm(slot: 1, label: "Edited on the wrist", hour: 6, minute: 30)) }
        let asleep = UInt32(Date().timeIntervalSince1970)
        await simulator.reportLiveStage(LiveStageEvent(kind: .fellAsleep, stage: .light, time: asleep))
        try #require(await Self.first(of: alarmChanges, within: 60) != nil, "the wrist edit did not reach the gateway")
        try #require(await Self.first(of: liveStages, within: 60) != nil, "the live stage did not reach the gateway")
        // The supervisor's writes of both are waiting for the lock; the link drops under them.
        try await Task.sleep(for: .milliseconds(300))
        await transport.dropLink()
        try await Task.sleep(for: .milliseconds(500))
        try lock.release()

        let editStored = try await Self.eventually(within: 60) {
            try await store.alarmHistory(watch: entry.address).contains { snapshot in
                snapshot.origin == .watch && snapshot.alarms.contains { $0.label == "Edited on the wrist" }
            }
        }
        let history = try await store.alarmHistory(watch: entry.address).map { "\($0.origin): \($0.alarms.map(\.label))" }
        #expect(editStored, "the alarm edit made on the wrist is not in the alarm history: \(history)")
        let stageStored = try await Self.eventually(within: 60) {
            guard let session = try await store.sessions(watch: entry.address).first else { return false }
            return try await store.liveStages(session: session.id).contains { $0.time == Int64(asleep) && $0.stage == .light }
        }
        let sessions = try await store.sessions(watch: entry.address)
        #expect(stageStored, "the live stage is not in the store: sessions \(sessions)")
        running.cancel()
        await running.value
    }

    @Test("links that drop and connects that fail leave no subscriptions in the watch's event fan-outs")
    func noSubscriptionsLeftBehind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-linkdrop-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        var settings = GatewayConfiguration(database: path)
        settings.reconnectMinimum = .milliseconds(20)
        settings.reconnectMaximum = .milliseconds(40)
        let simulator = SimulatedWatch()
        let transport = DroppableTransport(LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)))
        let supervisor = WatchSupervisor(entry: .init(address: WatchID("00:00:5E:00:54:98")!), transport: transport, store: try GatewayStore(path: path),
                                         settings: settings, logger: Logger(label: "test"), publish: { _ in })
        let watch = try #require(supervisor.watch as? Watch)
        /// Subscribers to the watch's events (link losses, alarm changes, live stages: each a view of them).
        func subscribers() async -> Int { await watch.watchEvents.subscriberCount }
        var servedCount: Int?
        let running = Task { await supervisor.run() }
        defer { running.cancel() }
        for round in 1...6 {
            // The link being served has its subscriptions (as many as the first link had).
            let served = await Self.eventually(within: 120) {
                guard await watch.isConnected else { return false }
                let count = await subscribers()
                return count >= 3 && (servedCount == nil || count == servedCount)
            }
            let count = await subscribers()
            try #require(served, "round \(round): \(count) subscribers to the watch's events, the first link had \(servedCount.map(String.init) ?? "?") (link losses, alarm changes and live stages at least)")
            servedCount = servedCount ?? count
            // Every other round the watch is out of range for three connects.
            if round.isMultiple(of: 2) { transport.refusals.withLock { $0 = 3 } }
            let opened = transport.opened.withLock { $0 }
            await transport.dropLink()
            let reopened = await Self.eventually(within: 120) { transport.opened.withLock { $0 } > opened }
            try #require(reopened, "round \(round): no reconnect in 120 s")
        }
        running.cancel()
        await running.value
        let left = await Self.eventually(within: 60) { await subscribers() == 0 }
        let remaining = await subscribers()
        #expect(left, "\(remaining) subscribers left after the supervisor stopped")
    }
}
