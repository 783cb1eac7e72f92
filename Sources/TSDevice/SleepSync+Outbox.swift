import Foundation
import TSModels
import TSSleep
import TSStore
import TSUpload

/// Turns what a sleep sync completed into upload events (`SleepSync.outbox`).
///
/// A sync that reaches the end of its range computes the nights of the synced records with the
/// sleep engine and enqueues every *final* night in the same transaction as the cursor write
/// that marks the range stored, so the data and its outbox events are committed together.
/// Each night's source id is `<watchId>:<night start, Unix seconds>`; the outbox keeps source
/// ids unique, so syncing the same range again never enqueues a night twice.
///
/// A night is final — will not change when more records arrive — when
/// - the synced range reaches `settle` past its end (a later item can no longer join it: the
///   engine splits segments at 30 minutes without sleep, and the watch hands over finished
///   items only);
/// - under rule 2 (the longest night segment of 20:00–08:00), the night window is over and
///   settled the same way; under rule 3 (the longest segment of the day), the day (20:00) is over;
/// - it starts at least 30 minutes after the beginning of the store's complete range, so no
///   earlier part of it can be missing.
public struct OutboxPolicy: Sendable {
    /// The zone the nights are computed in (their `date`, day windows).
    public var timeZone: TimeZone
    /// The statistics rule that decides what a night is; nil: the watch's own.
    public var statisticsRule: StatisticsRule?
    /// How long after a night's end the synced range must reach before it is final (at least 30 minutes).
    public var settle: Duration = .seconds(3600)
    /// "Now" for a sync without an end: the watch has handed over everything up to when the
    /// sync started. nil: the watch's configured clock.
    public var now: (@Sendable () -> Date)?

    public init(timeZone: TimeZone, statisticsRule: StatisticsRule? = nil) {
        self.timeZone = timeZone
        self.statisticsRule = statisticsRule
    }
}

extension SleepSync {
    /// The first day boundary at or before `instant`.
    static func dayBoundary(atOrBefore instant: Int64, timeZone: TimeZone) -> Int64 {
        let clock = LocalDayClock(timeZone: timeZone)
        return clock.windows(for: clock.belongingDate(of: instant)).eveningBefore
    }

    /// The events to enqueue with the cursor that marks `cursor` stored; `earliestQuery` is
    /// where this run began fetching, `rangeEnd` up to where the watch has handed over everything.
    func outboxEvents(_ policy: OutboxPolicy, cursor: SyncCursor, earliestQuery: Int64, rangeEnd: Int64) async throws -> [OutboxEventDraft] {
        let rule = StatisticsRule.resolved(configured: policy.statisticsRule, watch: await watch.info?.capabilities.statisticsRule)
        let lookbackSeconds = SleepNightUpload.lookback + max(SleepOperations.splittingAwakeSeconds, Int64(policy.settle.components.seconds))
        // Never looked at: the whole complete range. Else: around what this run fetched, and
        // around where the last look ended (nights that were not final then).
        let considered = try await store.outboxConsideredUpTo(watch: watchId)
        let lower = considered.map { min($0, earliestQuery) - lookbackSeconds } ?? cursor.rangeStart
        // Nights before the complete range are never enqueued, so nothing earlier is needed.
        let from = Self.dayBoundary(atOrBefore: max(lower, cursor.rangeStart), timeZone: policy.timeZone)
        let records = try await store.sleepRecords(watch: watchId, start: from, end: cursor.upTo)
        var nights = SleepNightUpload.finalNights(records: records, rule: rule, timeZone: policy.timeZone,
                                                  completeFrom: cursor.rangeStart, rangeEnd: rangeEnd, settle: policy.settle)
        // The samples of a night arrived while it was slept (the daemon stores them live), so
        // they are all in the store once the night is final.
        let heartRate = try await store.heartRateSummaries(watch: watchId, spans: nights.map(\.night.span))
        for index in nights.indices { nights[index].night.heartRate = heartRate[nights[index].night.span] }
        return SleepNightUpload.events(nights: nights, watchId: watchId)
    }
}
