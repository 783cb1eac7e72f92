import Foundation
import TSModels
import TSStore
import TSTransport

/// Progress of a running sleep sync, for progress bars.
public struct SleepSyncProgress: Sendable, Hashable {
    /// Records received in the current transfer / its total; 0 when the watch announces none
    /// (a dialect that hands over a range day by day).
    public var received: Int
    public var total: Int
    public var reconnects: Int

    public init(received: Int, total: Int, reconnects: Int) {
        self.received = received
        self.total = total
        self.reconnects = reconnects
    }
}

/// What a sleep sync did: the one result the CLI (`sleep sync`, `--json` in this shape), D-Bus
/// (SyncSleep's result dictionary), MQTT's `sleep/sync` command and the uploads read.
public struct SleepSyncReport: Sendable, Hashable, Codable {
    /// Records received from the watch (a record received twice counts twice).
    public var fetched: Int
    /// Records that were not in the store before.
    public var stored: Int
    /// Records the watch deleted after the durable commit (destructive watches only).
    public var deletedOnWatch: Int
    public var reconnects: Int
    /// The range confirmed to the watch with SLEEP_COMMIT, if any.
    public var committed: Range<Int64>?
    /// Nights newly put in the upload outbox (only with `SleepSync.outbox`).
    public var enqueued = 0
    /// Heart-rate samples the watch kept on its own, received for the range / not stored before
    /// (`WatchCapabilities.heartRateHistory`).
    public var heartRateFetched = 0
    public var heartRateStored = 0
    /// Why the heart-rate history could not be had, when the watch refused it (the sleep records
    /// were synced all the same).
    public var heartRateError: String?

    public init(fetched: Int, stored: Int, deletedOnWatch: Int, reconnects: Int, committed: Range<Int64>? = nil, enqueued: Int = 0,
                heartRateFetched: Int = 0, heartRateStored: Int = 0, heartRateError: String? = nil) {
        self.fetched = fetched
        self.stored = stored
        self.deletedOnWatch = deletedOnWatch
        self.reconnects = reconnects
        self.committed = committed
        self.enqueued = enqueued
        self.heartRateFetched = heartRateFetched
        self.heartRateStored = heartRateStored
        self.heartRateError = heartRateError
    }

    /// The committed range is the sync's own business (where its cursor went), not a result shown.
    enum CodingKeys: String, CodingKey {
        case fetched, stored, deletedOnWatch, reconnects, enqueued, heartRateFetched, heartRateStored, heartRateError
    }
}

/// Syncs raw sleep records of one watch, in any dialect, into the store, resuming after a
/// dropped link from the last durable record. A watch that takes an acknowledgement
/// (`WatchCapabilities.SleepSync.acknowledges`; protocol v1's SLEEP_COMMIT) gets it only after
/// the store has committed the records, so a watch that deletes synced data never loses any;
/// the cursor moves only with a commit, for a watch that takes none too.
///
/// A watch that keeps its own heart-rate history hands over the range's samples first, so the
/// nights this sync completes (their reports, their uploads) carry the heart rate the watch
/// measured while the gateway was away. Samples are stored by the time the watch measured them;
/// one stored already is not stored twice, so a resumed sync fetches them again harmlessly.
public struct SleepSync: Sendable {
    public let watch: any WatchCentral
    public let store: GatewayStore
    public let watchId: WatchID
    public var maxReconnects = 20
    public var firstBackoff: Duration = .milliseconds(100)
    public var maxBackoff: Duration = .seconds(5)
    /// Called with the records of each part (a page, a day) before they are stored (and before
    /// any acknowledgement depends on them).
    public var willStore: (@Sendable ([SleepItem]) async throws -> Void)?
    public var progress: (@Sendable (SleepSyncProgress) -> Void)?
    /// Called when the link is given up and the sync reconnects: the reconnect's number and why.
    public var reconnecting: (@Sendable (_ attempt: Int, _ cause: WatchError) -> Void)?
    /// When set, the nights a sync completes become upload events in the store's outbox, in the
    /// same transaction as the cursor write that marks their range stored (see `OutboxPolicy`).
    public var outbox: OutboxPolicy?
    /// Where the watch's clock was set back to since the stored records were made (the system
    /// clock stepped back, and the watch's clock with it): what the watch records next is
    /// stamped before the cursor, so the transfer of a range the store holds asks from here,
    /// not from the cursor. What is stored already is not stored twice; the cursor never goes back.
    public var watchClockSetBackTo: Int64?

    public init(watch: any WatchCentral, store: GatewayStore, watchId: WatchID) {
        self.watch = watch
        self.store = store
        self.watchId = watchId
    }

    /// Syncs records with start in [from, to) (to nil: up to now).
    public func run(from: Int64, to: Int64? = nil) async throws -> SleepSyncReport {
        var report = SleepSyncReport(fetched: 0, stored: 0, deletedOnWatch: 0, reconnects: 0, committed: nil)
        var backoff = firstBackoff
        var earliestQuery: Int64?
        var heartRateDone = false
        var heartRateFrom = try await heartRateStart(from: from)
        while true {
            do {
                if !heartRateDone {
                    do {
                        try await transferHeartRateHistory(from: &heartRateFrom, to: to, report: &report)
                    } catch where !(error is CancellationError) && !(error is StorageUnwritable) && (error as? WatchError)?.isRecoverable != true
                        && (error as? TransportError)?.isReplayDeparture != true {
                        // A watch that refuses its heart-rate history still hands over its sleep.
                        report.heartRateError = String(describing: error)
                    }
                    heartRateDone = true
                }
                try await transferAndCommit(from: from, to: to, report: &report, earliestQuery: &earliestQuery)
                try await store.markSynced(watch: watchId)
                return report
            } catch let error as WatchError where error.isRecoverable && report.reconnects < maxReconnects {
                report.reconnects += 1
                reconnecting?(report.reconnects, error)
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, maxBackoff)
            } catch let error as StorageUnwritable {
                // The disk refused a write: what it refused is not acknowledged, and the next sync fetches it again.
                throw error.with(consequence: report.committed == nil ? "nothing was acknowledged to the watch"
                                     : "what was acknowledged to the watch is stored, nothing after it was acknowledged",
                                 retry: "sync again")
            }
        }
    }

    /// After a lost link the transfer resumes behind the last sample stored (`from` moves), so
    /// a link that drops again and again still gets through the range.
    /// How far back a sync that resumes a range already stored goes for the heart-rate history:
    /// the watch hands it over by day, so the day the stored records end in is asked for again
    /// (what is stored already is not stored twice); a longer history was had by the syncs before.
    public static let heartRateOverlap: Int64 = 36 * 3600

    /// The sync's start, or, when it resumes a range the store holds (as the daemon's periodic
    /// syncs do), `heartRateOverlap` before where the stored records end.
    private func heartRateStart(from: Int64) async throws -> Int64 {
        guard let cursor = try await store.syncCursor(watch: watchId), cursor.rangeStart <= from, from <= cursor.upTo else { return from }
        return max(from, cursor.upTo - Self.heartRateOverlap)
    }

    private func transferHeartRateHistory(from: inout Int64, to: Int64?, report: inout SleepSyncReport) async throws {
        try await watch.connect()
        guard await watch.capabilities.heartRateHistory else { return }
        for try await samples in try await watch.heartRateHistory(start: from, end: to) {
            report.heartRateFetched += samples.count
            report.heartRateStored += try await store.storeHeartRate(samples, watch: watchId)
            if let last = samples.last { from = max(from, Int64(last.time.timeIntervalSince1970.rounded(.down)) + 1) }
        }
    }

    private func transferAndCommit(from: Int64, to: Int64?, report: inout SleepSyncReport, earliestQuery: inout Int64?) async throws {
        try await watch.connect()
        let cursor = try await store.syncCursor(watch: watchId)
        let contiguous = cursor.map { $0.rangeStart <= from && from <= $0.upTo } ?? false
        var current = contiguous ? cursor! : SyncCursor(rangeStart: from, upTo: from, committedUpTo: cursor?.committedUpTo)
        var queryStart = current.upTo
        if contiguous, let setBack = watchClockSetBackTo, setBack < queryStart { queryStart = max(setBack, current.rangeStart) }
        earliestQuery = min(earliestQuery ?? queryStart, queryStart)

        if to.map({ queryStart < $0 }) ?? true {
            // The watch hands over everything it holds up to `to`, or up to now when there is no end.
            let startedAt = outbox?.now?() ?? watch.configuration.now()
            let handedOverUpTo = min(to ?? .max, Int64(startedAt.timeIntervalSince1970))
            let transfer = try await watch.sleepTransfer(start: queryStart, end: to)
            var received = 0
            var lastStart: Int64?
            for try await records in transfer.parts {
                try await willStore?(records)
                guard let last = records.last else { continue }
                lastStart = last.start
                current.upTo = max(current.upTo, last.start)
                report.stored += try await store.storeSleepRecords(records, watch: watchId, cursor: current)
                received += records.count
                report.fetched += records.count
                progress?(SleepSyncProgress(received: received, total: transfer.total ?? 0, reconnects: report.reconnects))
            }
            try Task.checkCancellation()
            if let total = transfer.total, received != total {
                throw WatchError.protocolViolation("the transfer ended after \(received) of \(total) records")
            }
            // The whole range is stored now: up to `to`, or just past the last record.
            current.upTo = max(current.upTo, to ?? lastStart.map { $0 + 1 } ?? current.upTo)
            if let outbox {
                let events = try await outboxEvents(outbox, cursor: current, earliestQuery: earliestQuery ?? queryStart, rangeEnd: handedOverUpTo)
                try Task.checkCancellation()
                report.enqueued += try await store.setSyncCursor(current, watch: watchId, enqueueing: events, consideredUpTo: handedOverUpTo)
            } else {
                try await store.setSyncCursor(current, watch: watchId)
            }
        }

        // A watch that takes no acknowledgement keeps what it has; the cursor alone says what is stored.
        guard await watch.capabilities.sleepSync?.acknowledges == true else { return }
        let commitStart = max(from, current.committedUpTo ?? from)
        guard commitStart < current.upTo else { return }
        let count = try await store.countSleepRecords(watch: watchId, start: commitStart, end: current.upTo)
        report.deletedOnWatch += try await watch.acknowledgeSleep(start: commitStart, end: current.upTo, count: count)
        report.committed = commitStart..<current.upTo
        current.committedUpTo = current.upTo
        try await store.setSyncCursor(current, watch: watchId)
    }
}

extension WatchError {
    /// Failures that trying again (reconnecting if needed) can cure.
    public var isRecoverable: Bool {
        switch self {
        case .notConnected, .connectFailed, .disconnected, .timeout, .transferAbandoned: true
        default: false
        }
    }
}
