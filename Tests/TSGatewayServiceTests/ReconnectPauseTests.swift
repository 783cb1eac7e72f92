import Foundation
import Logging
import Synchronization
@testable import TSGatewayAPI
@testable import TSGatewayService
import TSModels
import TSStore
import TSTransport
import Testing

@Suite("the reconnect loop's pause")
struct ReconnectPauseTests {
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Whether a pause is still under way after the pausing task had time to run.
    func stillSleeping(_ finished: Flag) async throws -> Bool {
        try await Task.sleep(for: .milliseconds(200))
        return !finished.isSet
    }

    @Test("a pause that ran to its end leaves the next one whole; wake() ends it")
    func pauseAfterATimedOutPause() async throws {
        let pause = WakeableSleep()
        await pause.sleep(for: .milliseconds(10))
        let finished = Flag()
        let sleeping = Task { await pause.sleep(for: .seconds(3600)); finished.set() }
        #expect(try await stillSleeping(finished), "the second pause returned at once")
        pause.wake()
        await sleeping.value
        #expect(finished.isSet)
    }

    @Test("a wake while nobody pauses ends the next pause at once, and only that one")
    func pendingWake() async throws {
        let pause = WakeableSleep()
        pause.wake()
        await pause.sleep(for: .seconds(3600))
        let finished = Flag()
        let sleeping = Task { await pause.sleep(for: .seconds(3600)); finished.set() }
        #expect(try await stillSleeping(finished))
        sleeping.cancel()
        await sleeping.value
    }

    @Test("a forgotten wake does not shorten the next pause")
    func forgottenWake() async throws {
        let pause = WakeableSleep()
        pause.wake()
        pause.forgetWake()
        let finished = Flag()
        let sleeping = Task { await pause.sleep(for: .seconds(3600)); finished.set() }
        #expect(try await stillSleeping(finished))
        sleeping.cancel()
        await sleeping.value
        #expect(finished.isSet)
    }

    /// A watch whose adapter is gone: every connect fails at once.
    final class UnreachableTransport: WatchTransport {
        let attempts = Mutex(0)
        func open() async throws -> TransportConnection {
            attempts.withLock { $0 += 1 }
            throw TransportError.connectFailed("no Bluetooth adapter named hci0")
        }
    }

    @Test("a watch that cannot be reached is tried again after the backoff, not in a tight loop")
    func backoffBetweenFailedConnects() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-backoff-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        var settings = GatewayConfiguration(database: directory.appendingPathComponent("db.sqlite").path)
        settings.reconnectMinimum = .milliseconds(100)
        settings.reconnectMaximum = .milliseconds(200)
        let transport = UnreachableTransport()
        let supervisor = WatchSupervisor(entry: .init(address: WatchID("AA:BB:CC:DD:EE:FF")!), transport: transport, store: store,
                                         settings: settings, logger: Logger(label: "test"), publish: { _ in })
        let running = Task { await supervisor.run() }
        defer { running.cancel() }
        // The loop starts after the store's recovery, which load can delay: count from the
        // first attempt. It must try again at all …
        try await waitFor(transport, attempts: 2)
        // … and with pauses of 100 ms, then 200 ms (±20 %), try about 8 times in 1.5 s; a loop
        // without pauses makes thousands. Load can only make fewer.
        let first = transport.attempts.withLock { $0 }
        try await Task.sleep(for: .milliseconds(1500))
        let attempts = transport.attempts.withLock { $0 } - first
        #expect(attempts <= 12, "\(attempts) connect attempts in 1.5 s")
        running.cancel()
        await running.value
    }

    func waitFor(_ transport: UnreachableTransport, attempts: Int) async throws {
        for _ in 0..<3000 where transport.attempts.withLock({ $0 }) < attempts {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(transport.attempts.withLock { $0 } >= attempts, "the supervisor did not try to connect \(attempts) times in 30 s")
    }
}
