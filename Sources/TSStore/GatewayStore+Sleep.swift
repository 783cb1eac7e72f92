import Foundation
import GRDB
import TSModels

extension GatewayStore {
    /// Stores `records` and moves the sync cursor in one transaction, so a cursor never claims
    /// records that are not on disk. A record already stored (same watch, start and stage) is
    /// not stored twice; if the watch now reports another duration for it, the new one wins.
    /// Returns how many records were new.
    @discardableResult
    public func storeSleepRecords(_ records: [SleepItem], watch: WatchID, cursor: SyncCursor?) async throws -> Int {
        let now = Int64(Date().timeIntervalSince1970)
        return try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            var inserted = 0
            for record in records {
                try db.execute(
                    sql: "INSERT INTO sleepRecord (watchId, start, stage, duration, receivedAt) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    arguments: [watch.rawValue, record.start, Int(record.stage.rawValue), record.duration, now])
                if db.changesCount > 0 {
                    inserted += 1
                } else {
                    try db.execute(
                        sql: "UPDATE sleepRecord SET duration = ? WHERE watchId = ? AND start = ? AND stage = ? AND duration != ?",
                        arguments: [record.duration, watch.rawValue, record.start, Int(record.stage.rawValue), record.duration])
                }
            }
            if let cursor { try Self.writeCursor(db, watch: watch, cursor, now: now) }
            return inserted
        }
    }

    public func setSyncCursor(_ cursor: SyncCursor, watch: WatchID) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            try Self.writeCursor(db, watch: watch, cursor, now: now)
        }
    }

    public func syncCursor(watch: WatchID) async throws -> SyncCursor? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT rangeStart, upTo, committedUpTo FROM syncCursor WHERE watchId = ?", arguments: [watch.rawValue])
                .map { SyncCursor(rangeStart: $0["rangeStart"], upTo: $0["upTo"], committedUpTo: $0["committedUpTo"]) }
        }
    }

    /// Records with start in [start, end), ordered by start then stage.
    public func sleepRecords(watch: WatchID, start: Int64 = .min, end: Int64 = .max) async throws -> [SleepItem] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT start, stage, duration FROM sleepRecord
                WHERE watchId = ? AND start >= ? AND start < ? ORDER BY start, stage
                """, arguments: [watch.rawValue, start, end]).map { row in
                let stageValue: Int = row["stage"]
                guard let stage = SleepStage(rawValue: UInt8(clamping: stageValue)) else {
                    throw StoreError.corruptValue("sleep stage \(stageValue) at \(row["start"] as Int64)")
                }
                return SleepItem(stage: stage, start: row["start"], duration: row["duration"])
            }
        }
    }

    /// The latest time this gateway's own clock stamped on anything stored: a sleep record's
    /// arrival, a watch last seen, a heart-rate sample's arrival; nil with an empty store. The
    /// system clock is not trusted when it is earlier than this (`ClockTrust`).
    public func newestStamp() async throws -> Date? {
        try await pool.read { db in
            let seconds = try Int64.fetchOne(db, sql: """
                SELECT MAX(stamp) FROM (
                    SELECT MAX(receivedAt) AS stamp FROM sleepRecord
                    UNION ALL SELECT MAX(lastSeen) FROM watch
                    UNION ALL SELECT MAX(timeMs) / 1000 FROM heartRateSample)
                """)
            return seconds.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        }
    }

    public func countSleepRecords(watch: WatchID, start: Int64, end: Int64) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sleepRecord WHERE watchId = ? AND start >= ? AND start < ?",
                             arguments: [watch.rawValue, start, end]) ?? 0
        }
    }

    static func writeCursor(_ db: Database, watch: WatchID, _ cursor: SyncCursor, now: Int64) throws {
        try db.execute(sql: """
            INSERT INTO syncCursor (watchId, rangeStart, upTo, committedUpTo, updatedAt) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(watchId) DO UPDATE SET rangeStart = excluded.rangeStart, upTo = excluded.upTo,
                committedUpTo = excluded.committedUpTo, updatedAt = excluded.updatedAt
            """, arguments: [watch.rawValue, cursor.rangeStart, cursor.upTo, cursor.committedUpTo, now])
    }

    static func ensureWatch(_ db: Database, id: WatchID, now: Int64) throws {
        try db.execute(sql: "INSERT INTO watch (id, firstSeen, lastSeen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                       arguments: [id.rawValue, now, now])
    }
}
