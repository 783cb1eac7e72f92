import Foundation
import Synchronization
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSProtocol
import TSStore
import Testing

private let watchW = WatchID("00:00:5E:00:53:77")!

@Suite("live sleep sessions")
struct LiveSessionTests {
    final class Recorder: Sendable {
        let events = Mutex<[GatewayEvent]>([])
        func record(_ event: GatewayEvent) { events.withLock { $0.append(event) } }
        var changes: [String] { events.withLock { $0.compactMap { $0.type == .session ? $0.sessionChange?.rawValue : $0.type.rawValue } } }
    }

    func makeStore() throws -> (GatewayStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-sessions-\(UUID().uuidString.prefix(8))")
        return (try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path), directory)
    }

    func stage(_ kind: LiveStage.Change, _ stage: SleepStage, _ time: UInt32) -> LiveStage {
        LiveStage(time: Int64(time), stage: stage, change: kind)
    }

    @Test("open → interrupted → resumed → closed → complete, each step stored before it is announced")
    func lifecycle() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = Recorder()
        let tracker = LiveSessionTracker(watchId: watchW, store: store, timeZone: .gmt) { recorder.record($0) }
        // An awake stage before sleep opens nothing.
        try await tracker.handle(stage(.stageChanged, .awake, 1_000))
        #expect(try await store.sessions(watch: watchW).isEmpty)
        try await tracker.handle(stage(.fellAsleep, .light, 1_100))
        try await tracker.handle(stage(.stageChanged, .deep, 1_700))
        try await tracker.interrupt(now: Date(timeIntervalSince1970: 1_800), reason: "link lost")
        var stored = try #require(try await store.sessions(watch: watchW).first)
        #expect(stored.state == .open && stored.interrupted && stored.interruptions == 1 && stored.lastActivity == 1_800)
        try await tracker.handle(stage(.stageChanged, .rem, 2_500))
        try await tracker.handle(stage(.wokeUp, .awake, 3_000))
        stored = try #require(try await store.sessions(watch: watchW).first)
        #expect(stored.state == .closed && !stored.interrupted && stored.fellAsleepAt == 1_100 && stored.wokeUpAt == 3_000 && stored.endTime == 3_000)
        #expect(try await store.liveStages(session: stored.id).map(\.stage) == [.light, .deep, .rem, .awake])
        // A sync that reached only 2_999 leaves it closed; one past the end completes it.
        try await tracker.syncedUpTo(2_999)
        #expect(try await store.sessions(watch: watchW).first?.state == .closed)
        try await tracker.syncedUpTo(3_000)
        #expect(try await store.sessions(watch: watchW).first?.state == .complete)
        // The session opens before the stage that opened it is announced (sleep_tracking_started comes first).
        #expect(recorder.changes == ["liveStage", "opened", "liveStage", "fellAsleep", "liveStage", "interrupted", "resumed", "liveStage",
                                     "liveStage", "wokeUp", "closed", "completed"])
    }

    @Test("a session left open by a process that died gets its last sign of life as unexpected end; a cleanly interrupted one resumes")
    func recovery() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = LiveSessionTracker(watchId: watchW, store: store, timeZone: .gmt) { _ in }
        try await first.handle(stage(.fellAsleep, .light, 10_000))
        try await first.heartbeat(now: Date(timeIntervalSince1970: 10_060))
        // The process dies here: nothing marks the session.
        let recorder = Recorder()
        let second = LiveSessionTracker(watchId: watchW, store: store, timeZone: .gmt) { recorder.record($0) }
        try await second.recover(now: Date(timeIntervalSince1970: 11_000))
        let died = try #require(try await store.sessions(watch: watchW).first)
        #expect(died.state == .closed && died.unexpectedEndTime == 10_060 && died.endTime == 10_060)
        #expect(recorder.changes == ["unexpectedEnd"])

        // A clean stop interrupts; a start within two hours resumes the same session.
        try await second.handle(stage(.fellAsleep, .light, 20_000))
        try await second.interrupt(now: Date(timeIntervalSince1970: 20_100), reason: "the gateway stopped")
        let third = LiveSessionTracker(watchId: watchW, store: store, timeZone: .gmt) { _ in }
        try await third.recover(now: Date(timeIntervalSince1970: 21_000))
        try await third.handle(stage(.stageChanged, .deep, 21_100))
        let resumed = try #require(try await store.sessions(watch: watchW).first)
        #expect(resumed.startTime == 20_000 && resumed.state == .open && !resumed.interrupted && resumed.unexpectedEndTime == nil)
        // After more than two hours it is closed at its last activity instead.
        try await third.interrupt(now: Date(timeIntervalSince1970: 21_200), reason: "the gateway stopped")
        let fourth = LiveSessionTracker(watchId: watchW, store: store, timeZone: .gmt) { _ in }
        try await fourth.recover(now: Date(timeIntervalSince1970: 21_200 + 3 * 3600))
        let stale = try #require(try await store.sessions(watch: watchW).first)
        #expect(stale.state == .closed && stale.endTime == 21_200 && stale.unexpectedEndTime == nil)
    }
}
