import Foundation
import GRDB
import TSModels

/// One night (or nap) followed live from the watch's stage events: open while the wearer
/// sleeps, closed at the final wake-up, complete once the synced records cover it.
public struct LiveSleepSession: Sendable, Hashable, Codable {
    public enum State: String, Sendable, Hashable, Codable {
        case open, closed, complete
    }

    public var id: String
    public var watchId: WatchID
    public var state: State
    public var startTime: Int64
    public var endTime: Int64?
    /// Set when the gateway died while the session was open: the last moment it was known alive.
    public var unexpectedEndTime: Int64?
    /// The link is down while the session is open; stage events resume it.
    public var interrupted: Bool
    public var interruptions: Int
    public var fellAsleepAt: Int64?
    public var wokeUpAt: Int64?
    /// The last stage event or heartbeat, persisted so a crash leaves an end time behind.
    public var lastActivity: Int64
    public var timeZone: String
    /// The latest stage, from the stage rows.
    public var currentStage: SleepStage?

    public init(id: String = UUID().uuidString, watchId: WatchID, startTime: Int64, timeZone: String) {
        self.id = id
        self.watchId = watchId
        self.state = .open
        self.startTime = startTime
        self.interrupted = false
        self.interruptions = 0
        self.lastActivity = startTime
        self.timeZone = timeZone
    }
}

/// One stage event of a live session.
public struct LiveStageRecord: Sendable, Hashable, Codable {
    public var time: Int64
    public var stage: SleepStage
    /// fellAsleep, stageChanged or wokeUp.
    public var kind: String

    public init(time: Int64, stage: SleepStage, kind: String) {
        self.time = time
        self.stage = stage
        self.kind = kind
    }
}


extension GatewayStore {
    /// Inserts or updates a session, and appends `stage` to it, in one transaction.
    public func saveSession(_ session: LiveSleepSession, appending stage: LiveStageRecord? = nil) async throws {
        try await write { db in
            try Self.ensureWatch(db, id: session.watchId, now: session.startTime)
            try db.execute(sql: """
                INSERT INTO liveSession (id, watchId, state, startTime, endTime, unexpectedEndTime, interrupted, interruptions,
                                         fellAsleepAt, wokeUpAt, lastActivity, timeZone)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET state = excluded.state, endTime = excluded.endTime,
                    unexpectedEndTime = excluded.unexpectedEndTime, interrupted = excluded.interrupted,
                    interruptions = excluded.interruptions, fellAsleepAt = excluded.fellAsleepAt,
                    wokeUpAt = excluded.wokeUpAt, lastActivity = excluded.lastActivity
                """, arguments: [session.id, session.watchId.rawValue, session.state.rawValue, session.startTime, session.endTime,
                                 session.unexpectedEndTime, session.interrupted, session.interruptions, session.fellAsleepAt,
                                 session.wokeUpAt, session.lastActivity, session.timeZone])
            if let stage {
                try db.execute(sql: "INSERT OR IGNORE INTO liveStage (sessionId, time, stage, kind) VALUES (?, ?, ?, ?)",
                               arguments: [session.id, stage.time, Int(stage.stage.rawValue), stage.kind])
            }
        }
    }

    /// Sessions of a watch (all watches when nil), newest first.
    public func sessions(watch: WatchID? = nil, states: Set<LiveSleepSession.State>? = nil, limit: Int = 50) async throws -> [LiveSleepSession] {
        try await pool.read { db in
            var sql = "SELECT s.*, (SELECT stage FROM liveStage WHERE sessionId = s.id ORDER BY time DESC, rowid DESC LIMIT 1) AS lastStage FROM liveSession s"
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let watch {
                conditions.append("s.watchId = ?")
                _ = arguments.append(contentsOf: [watch.rawValue])
            }
            if let states {
                conditions.append("s.state IN (\(states.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")))")
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += " ORDER BY s.startTime DESC LIMIT \(max(limit, 1))"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                guard let state = LiveSleepSession.State(rawValue: row["state"]) else {
                    throw StoreError.corruptValue("live session \(row["id"] as String) has the unknown state \(row["state"] as String)")
                }
                var session = LiveSleepSession(id: row["id"], watchId: try row.watchID("watchId"), startTime: row["startTime"], timeZone: row["timeZone"])
                session.state = state
                session.endTime = row["endTime"]
                session.unexpectedEndTime = row["unexpectedEndTime"]
                session.interrupted = row["interrupted"]
                session.interruptions = row["interruptions"]
                session.fellAsleepAt = row["fellAsleepAt"]
                session.wokeUpAt = row["wokeUpAt"]
                session.lastActivity = row["lastActivity"]
                session.currentStage = (row["lastStage"] as Int?).flatMap { SleepStage(rawValue: UInt8(clamping: $0)) }
                return session
            }
        }
    }

    public func liveStages(session: String) async throws -> [LiveStageRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT time, stage, kind FROM liveStage WHERE sessionId = ? ORDER BY time, rowid", arguments: [session]).map { row in
                guard let stage = SleepStage(rawValue: UInt8(clamping: row["stage"] as Int)) else {
                    throw StoreError.corruptValue("live stage \(row["stage"] as Int) of session \(session)")
                }
                return LiveStageRecord(time: row["time"], stage: stage, kind: row["kind"])
            }
        }
    }
}
