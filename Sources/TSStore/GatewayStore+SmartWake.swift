import Foundation
import GRDB
import TSModels

/// How the gateway settled one ringing of an alarm with a smart window.
public enum SmartWakeOutcome: String, Sendable, Hashable, Codable {
    /// The gateway made the watch ring inside the window.
    case rang
    /// No light or awake stage in the window: the watch's own alarm rang at its time.
    case leftToWatch
}

extension GatewayStore {
    /// Sets the smart window of an alarm slot (minutes before its time; 0 removes it).
    public func setSmartWakeWindow(watch: WatchID, slot: Int, minutes: Int) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            if minutes > 0 {
                try db.execute(sql: "INSERT OR REPLACE INTO smartWakeWindow (watchId, slot, minutes) VALUES (?, ?, ?)", arguments: [watch.rawValue, slot, minutes])
            } else {
                try db.execute(sql: "DELETE FROM smartWakeWindow WHERE watchId = ? AND slot = ?", arguments: [watch.rawValue, slot])
            }
        }
    }

    /// Replaces the watch's whole set of smart windows (minutes by slot; a 0 is no window), in
    /// one transaction.
    public func replaceSmartWakeWindows(watch: WatchID, with windows: [Int: Int]) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            try db.execute(sql: "DELETE FROM smartWakeWindow WHERE watchId = ?", arguments: [watch.rawValue])
            for (slot, minutes) in windows where minutes > 0 {
                try db.execute(sql: "INSERT INTO smartWakeWindow (watchId, slot, minutes) VALUES (?, ?, ?)", arguments: [watch.rawValue, slot, minutes])
            }
        }
    }

    /// Smart window minutes by alarm slot.
    public func smartWakeWindows(watch: WatchID) async throws -> [Int: Int] {
        try await pool.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT slot, minutes FROM smartWakeWindow WHERE watchId = ?", arguments: [watch.rawValue])
                .map { ($0["slot"] as Int, $0["minutes"] as Int) })
        }
    }

    /// Records how the ringing of `slot` at `alarmTime` was settled. False when it was settled
    /// already (by this process or one before it): then nothing must be done about it again.
    public func settleSmartWake(watch: WatchID, slot: Int, alarmTime: Date, outcome: SmartWakeOutcome, stage: SleepStage?) async throws -> Bool {
        let now = Int64(Date().timeIntervalSince1970)
        return try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            try db.execute(sql: """
                INSERT INTO smartWakeDecision (watchId, slot, alarmTime, outcome, stage, decidedAt) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """, arguments: [watch.rawValue, slot, Int64(alarmTime.timeIntervalSince1970), outcome.rawValue, stage.map { Int($0.rawValue) }, now])
            return db.changesCount > 0
        }
    }

    /// The ringings settled for alarm times at or after `since`.
    public func settledSmartWakes(watch: WatchID, since: Date) async throws -> [(slot: Int, alarmTime: Date, outcome: SmartWakeOutcome)] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT slot, alarmTime, outcome FROM smartWakeDecision WHERE watchId = ? AND alarmTime >= ? ORDER BY alarmTime, slot",
                             arguments: [watch.rawValue, Int64(since.timeIntervalSince1970)]).map { row in
                let text: String = row["outcome"]
                guard let outcome = SmartWakeOutcome(rawValue: text) else { throw StoreError.corruptValue("smart wake outcome \"\(text)\"") }
                return (row["slot"] as Int, Date(timeIntervalSince1970: TimeInterval(row["alarmTime"] as Int64)), outcome)
            }
        }
    }
}
