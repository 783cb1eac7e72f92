import Foundation
import TSModels
import TSGatewayAPI
import TSStore

/// The live sleep session of one watch, from its LIVE_STAGE events: a session opens when the
/// wearer falls asleep (or at the first sleep stage), is interrupted while the link is down and
/// resumed by the next stage event, closes at the wake-up, and is complete once a sleep sync
/// has stored the records past its end. Every change is in the store before it is announced,
/// so a gateway that dies leaves its session behind with the last moment it was alive.
public actor LiveSessionTracker {
    let watchId: WatchID
    let store: GatewayStore
    let timeZone: TimeZone
    let publish: @Sendable (GatewayEvent) -> Void
    public private(set) var current: LiveSleepSession?
    /// How long after its last activity an interrupted session may still be resumed.
    let resumeWindow: Int64 = 2 * 3600

    public init(watchId: WatchID, store: GatewayStore, timeZone: TimeZone, publish: @escaping @Sendable (GatewayEvent) -> Void) {
        self.watchId = watchId
        self.store = store
        self.timeZone = timeZone
        self.publish = publish
    }

    /// At start: a session the previous process left open without interrupting it means that
    /// process died; it ends at its last recorded activity. A session interrupted by a clean
    /// stop stays resumable for `resumeWindow`.
    public func recover(now: Date = Date()) async throws {
        for var session in try await store.sessions(watch: watchId, states: [.open], limit: 10) {
            let nowSeconds = Int64(now.timeIntervalSince1970)
            if !session.interrupted {
                session.unexpectedEndTime = session.lastActivity
                session.endTime = session.lastActivity
                session.state = .closed
                try await store.saveSession(session)
                announce(session, change: .unexpectedEnd, time: now)
            } else if nowSeconds - session.lastActivity > resumeWindow {
                session.endTime = session.lastActivity
                session.state = .closed
                try await store.saveSession(session)
                announce(session, change: .closed, time: now)
            } else if current == nil {
                current = session
            }
        }
    }

    /// One LIVE_STAGE event from the watch.
    public func handle(_ event: LiveStage) async throws {
        let time = event.time
        let record = LiveStageRecord(time: time, stage: event.stage, kind: event.change.rawValue)
        let stageEvent = GatewayEvent(.liveStage(stage: event.stage, kind: event.change), watch: watchId, time: Date(timeIntervalSince1970: TimeInterval(time)))

        guard var session = current, session.state == .open else {
            guard event.change != .wokeUp, event.stage != .awake else {
                publish(stageEvent)
                return
            }
            var session = LiveSleepSession(watchId: watchId, startTime: time, timeZone: timeZone.identifier)
            session.fellAsleepAt = time
            try await store.saveSession(session, appending: record)
            session.currentStage = event.stage
            current = session
            announce(session, change: .opened, time: stageEvent.time)
            publish(stageEvent)
            publish(GatewayEvent(.fellAsleep(session: session), watch: watchId, time: stageEvent.time))
            return
        }
        let resumed = session.interrupted
        session.interrupted = false
        session.lastActivity = max(session.lastActivity, time)
        session.currentStage = event.stage
        if event.change == .fellAsleep, session.fellAsleepAt == nil { session.fellAsleepAt = time }
        if event.change == .wokeUp {
            session.wokeUpAt = time
            session.endTime = time
            session.state = .closed
        }
        try await store.saveSession(session, appending: record)
        current = session.state == .open ? session : nil
        if resumed { announce(session, change: .resumed, time: stageEvent.time) }
        publish(stageEvent)
        if event.change == .wokeUp {
            publish(GatewayEvent(.wokeUp(session: session), watch: watchId, time: stageEvent.time))
            announce(session, change: .closed, time: stageEvent.time)
        }
    }

    /// The link went down (or the daemon stops) while a session is open.
    public func interrupt(now: Date = Date(), reason: String) async throws {
        guard var session = current, session.state == .open, !session.interrupted else { return }
        session.interrupted = true
        session.interruptions += 1
        session.lastActivity = max(session.lastActivity, Int64(now.timeIntervalSince1970))
        try await store.saveSession(session)
        current = session
        announce(session, change: .interrupted, time: now, reason: reason)
    }

    /// Keeps the open session's last-known-alive time fresh, for the unexpected-end time.
    public func heartbeat(now: Date = Date()) async throws {
        guard var session = current, session.state == .open, !session.interrupted else { return }
        session.lastActivity = max(session.lastActivity, Int64(now.timeIntervalSince1970))
        try await store.saveSession(session)
        current = session
    }

    /// After a sleep sync that reached `upTo`: closed sessions that ended by then are complete.
    public func syncedUpTo(_ upTo: Int64, now: Date = Date()) async throws {
        for var session in try await store.sessions(watch: watchId, states: [.closed], limit: 20) {
            guard let end = session.endTime, end <= upTo else { continue }
            session.state = .complete
            try await store.saveSession(session)
            announce(session, change: .completed, time: now)
        }
    }

    /// The open session, or the latest one.
    public func latest() async throws -> LiveSleepSession? {
        if let current { return current }
        return try await store.sessions(watch: watchId, limit: 1).first
    }

    private func announce(_ session: LiveSleepSession, change: GatewayEvent.SessionChange, time: Date, reason: String? = nil) {
        publish(GatewayEvent(.session(change: change, session: session, reason: reason), watch: watchId, time: time))
    }
}
