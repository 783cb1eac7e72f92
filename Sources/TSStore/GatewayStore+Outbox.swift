import Foundation
import GRDB
import TSModels

/// The state of one outbox event.
public enum OutboxStatus: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not uploaded yet (never tried, or waiting for its next attempt).
    case pending
    /// The server has it (it answered 2xx, or 409: it already had this source id).
    case synced
    /// The server refused it (400); not retried until `retryFailedOutboxEvents()`.
    case failed
}

/// Something to put in the outbox: `payload` is the request body, built when enqueued.
public struct OutboxEventDraft: Sendable, Hashable {
    /// Unique across the outbox: enqueuing a source id again is a no-op.
    public var sourceId: String
    public var watchId: WatchID
    public var kind: String
    public var payload: String

    public init(sourceId: String, watchId: WatchID, kind: String, payload: String) {
        self.sourceId = sourceId
        self.watchId = watchId
        self.kind = kind
        self.payload = payload
    }
}

/// One row of the outbox.
public struct OutboxEvent: Sendable, Hashable {
    public var id: Int64
    public var sourceId: String
    public var watchId: WatchID
    public var kind: String
    public var payload: String
    public var createdAt: Date
    public var status: OutboxStatus
    public var attempts: Int
    /// Why the last attempt did not succeed; for a 409, a note that the server already had it.
    public var lastError: String?
    /// When a pending event is next due.
    public var nextAttemptAt: Date?
    public var syncedAt: Date?
    /// The id the server gave the upload, if its answer had one.
    public var backendId: String?
    /// The HTTP status of the last answer (nil: no answer, e.g. connection refused).
    public var httpStatus: Int?
}

/// The outbox at a glance, for `tsgateway outbox status`.
public struct OutboxSummary: Sendable, Hashable {
    public var pending = 0
    public var synced = 0
    public var failed = 0
    /// When the oldest pending event was enqueued.
    public var oldestPending: Date?
    /// The earliest time a pending event is due.
    public var nextAttempt: Date?
    /// The most recent error of a pending event that has been tried.
    public var lastPendingError: String?

    public init() {}

    public var total: Int { pending + synced + failed }
}

extension GatewayStore {
    /// Enqueues `events` (a source id already in the outbox, in any status, is left alone).
    /// Returns how many were new.
    @discardableResult
    public func enqueueOutboxEvents(_ events: [OutboxEventDraft], now: Date = Date()) async throws -> Int {
        try await write { db in try Self.insertOutboxEvents(db, events, now: now) }
    }

    /// Moves the sync cursor and enqueues `events` in one transaction: either the cursor claims
    /// the range and its nights are in the outbox, or neither. `consideredUpTo` records up to
    /// where the synced data has been looked at for events (it only ever grows).
    /// Returns how many events were new.
    @discardableResult
    public func setSyncCursor(_ cursor: SyncCursor, watch: WatchID, enqueueing events: [OutboxEventDraft], consideredUpTo: Int64) async throws -> Int {
        let now = Date()
        let seconds = Int64(now.timeIntervalSince1970)
        return try await write { db in
            try Self.ensureWatch(db, id: watch, now: seconds)
            try Self.writeCursor(db, watch: watch, cursor, now: seconds)
            let inserted = try Self.insertOutboxEvents(db, events, now: now)
            try db.execute(sql: """
                INSERT INTO uploadWatermark (watchId, consideredUpTo, updatedAt) VALUES (?, ?, ?)
                ON CONFLICT(watchId) DO UPDATE SET consideredUpTo = max(consideredUpTo, excluded.consideredUpTo), updatedAt = excluded.updatedAt
                """, arguments: [watch.rawValue, consideredUpTo, seconds])
            return inserted
        }
    }

    /// Up to where the synced data of `watch` has been turned into outbox events (nil: never).
    public func outboxConsideredUpTo(watch: WatchID) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT consideredUpTo FROM uploadWatermark WHERE watchId = ?", arguments: [watch.rawValue])
        }
    }

    /// Pending events due at `now`, oldest first.
    ///
    /// `steppedBackAfter`: a next attempt later than this was set by a clock that has since been
    /// stepped back (no backoff reaches that far): due as well, rather than months from now.
    public func dueOutboxEvents(now: Date = Date(), steppedBackAfter: Date? = nil, limit: Int = 20) async throws -> [OutboxEvent] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM uploadOutbox WHERE status = 'pending' AND (nextAttemptAt IS NULL OR nextAttemptAt <= ? OR nextAttemptAt > ?)
                ORDER BY id LIMIT ?
                """, arguments: [now.timeIntervalSince1970, (steppedBackAfter ?? .distantFuture).timeIntervalSince1970, limit]).map(Self.outboxEvent)
        }
    }

    /// The earliest time a pending event is due (nil: nothing pending).
    public func nextOutboxAttempt() async throws -> Date? {
        try await pool.read { db in
            try Double.fetchOne(db, sql: "SELECT min(coalesce(nextAttemptAt, 0)) FROM uploadOutbox WHERE status = 'pending'")
                .map { Date(timeIntervalSince1970: $0) }
        }
    }

    public func outboxEvent(sourceId: String) async throws -> OutboxEvent? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM uploadOutbox WHERE sourceId = ?", arguments: [sourceId]).map(Self.outboxEvent)
        }
    }

    /// Events oldest first, optionally of one status only.
    public func outboxEvents(status: OutboxStatus? = nil, limit: Int = 1000) async throws -> [OutboxEvent] {
        try await pool.read { db in
            if let status {
                return try Row.fetchAll(db, sql: "SELECT * FROM uploadOutbox WHERE status = ? ORDER BY id LIMIT ?",
                                        arguments: [status.rawValue, limit]).map(Self.outboxEvent)
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM uploadOutbox ORDER BY id LIMIT ?", arguments: [limit]).map(Self.outboxEvent)
        }
    }

    /// The server has the event: 2xx (with the id it gave, if any) or 409 (with a note).
    public func markOutboxSynced(id: Int64, httpStatus: Int, backendId: String? = nil, note: String? = nil, now: Date = Date()) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE uploadOutbox SET status = 'synced', attempts = attempts + 1, syncedAt = ?, httpStatus = ?,
                    backendId = ?, lastError = ?, nextAttemptAt = NULL WHERE id = ?
                """, arguments: [now.timeIntervalSince1970, httpStatus, backendId, note, id])
        }
    }

    /// The server refused the event for good (400): kept with the reason, not retried.
    public func markOutboxFailed(id: Int64, httpStatus: Int?, reason: String) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE uploadOutbox SET status = 'failed', attempts = attempts + 1, httpStatus = ?, lastError = ?, nextAttemptAt = NULL
                WHERE id = ?
                """, arguments: [httpStatus, reason, id])
        }
    }

    /// The attempt failed in a way that may pass (5xx, timeout, no connection): stays pending.
    public func markOutboxRetry(id: Int64, httpStatus: Int?, error: String, nextAttemptAt: Date) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE uploadOutbox SET attempts = attempts + 1, httpStatus = ?, lastError = ?, nextAttemptAt = ?
                WHERE id = ? AND status = 'pending'
                """, arguments: [httpStatus, error, nextAttemptAt.timeIntervalSince1970, id])
        }
    }

    /// Failed events become pending again, due now, with their attempts reset (after the
    /// server or the data was fixed). Returns how many.
    @discardableResult
    public func retryFailedOutboxEvents(now: Date = Date()) async throws -> Int {
        try await write { db in
            try db.execute(sql: "UPDATE uploadOutbox SET status = 'pending', attempts = 0, nextAttemptAt = ? WHERE status = 'failed'",
                           arguments: [now.timeIntervalSince1970])
            return db.changesCount
        }
    }

    public func outboxSummary() async throws -> OutboxSummary {
        try await pool.read { db in
            var summary = OutboxSummary()
            for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM uploadOutbox GROUP BY status") {
                let count: Int = row["n"]
                switch OutboxStatus(rawValue: row["status"]) {
                case .pending: summary.pending = count
                case .synced: summary.synced = count
                case .failed: summary.failed = count
                case nil: break
                }
            }
            if let row = try Row.fetchOne(db, sql: """
                SELECT min(createdAt) AS oldest, min(coalesce(nextAttemptAt, 0)) AS next FROM uploadOutbox WHERE status = 'pending'
                """) {
                summary.oldestPending = (row["oldest"] as Double?).map { Date(timeIntervalSince1970: $0) }
                summary.nextAttempt = (row["next"] as Double?).map { Date(timeIntervalSince1970: $0) }
            }
            summary.lastPendingError = try String.fetchOne(db, sql: """
                SELECT lastError FROM uploadOutbox WHERE status = 'pending' AND lastError IS NOT NULL
                ORDER BY nextAttemptAt DESC, id DESC LIMIT 1
                """)
            return summary
        }
    }

    static func insertOutboxEvents(_ db: Database, _ events: [OutboxEventDraft], now: Date) throws -> Int {
        var inserted = 0
        for event in events {
            try db.execute(sql: """
                INSERT INTO uploadOutbox (sourceId, watchId, kind, payload, createdAt, status, attempts, nextAttemptAt)
                VALUES (?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT(sourceId) DO NOTHING
                """, arguments: [event.sourceId, event.watchId.rawValue, event.kind, event.payload, now.timeIntervalSince1970, now.timeIntervalSince1970])
            inserted += db.changesCount
        }
        return inserted
    }

    static func outboxEvent(_ row: Row) throws -> OutboxEvent {
        let statusText: String = row["status"]
        guard let status = OutboxStatus(rawValue: statusText) else {
            throw StoreError.corruptValue("outbox status \"\(statusText)\"")
        }
        return OutboxEvent(
            id: row["id"], sourceId: row["sourceId"], watchId: try row.watchID("watchId"), kind: row["kind"], payload: row["payload"],
            createdAt: Date(timeIntervalSince1970: row["createdAt"]), status: status, attempts: row["attempts"],
            lastError: row["lastError"], nextAttemptAt: (row["nextAttemptAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
            syncedAt: (row["syncedAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
            backendId: row["backendId"], httpStatus: row["httpStatus"])
    }
}
