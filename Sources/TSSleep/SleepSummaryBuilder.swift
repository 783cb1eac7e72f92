import TSModels

/// The 0…100 quality score (spec, "Quality score"). Integer arithmetic, so it is deterministic.
public enum SleepQuality {
    /// Total sleep earning full duration points.
    public static let fullDurationSeconds: Int64 = 8 * 3600
    /// Deep-sleep share (of total sleep) earning full deep points: one quarter.
    public static let fullDeepShareDenominator: Int64 = 4

    /// duration points (0…50) + deep points (0…30) + continuity points (0…20); 0 without sleep.
    public static func score(totalSleep: Int64, deepSleep: Int64, awakenings: Int) -> UInt8 {
        guard totalSleep > 0 else { return 0 }
        let deep = min(max(deepSleep, 0), totalSleep)
        let durationPoints = 50 * min(totalSleep, fullDurationSeconds) / fullDurationSeconds
        // Exact integers for any real night; Double only for absurd totals that would overflow.
        let deepPoints = totalSleep < Int64.max / 120
            ? 30 * min(fullDeepShareDenominator * deep, totalSleep) / totalSleep
            : Int64(30 * min(Double(fullDeepShareDenominator) * Double(deep), Double(totalSleep)) / Double(totalSleep))
        let continuityPoints = Int64(max(0, 20 - 4 * min(max(awakenings, 0), 5)))
        return UInt8(clamping: durationPoints + deepPoints + continuityPoints)
    }
}

/// Builds summaries and metrics from chronological, non-overlapping items.
public enum SleepSummaryBuilder {
    /// Whole-percent shares summing to exactly 100 (largest remainder, ties to the earlier stage in
    /// awake, light, deep, REM order), or all 0 when nothing was recorded.
    public static func percentages(_ durations: StageDurations) -> StagePercentages {
        var values = SleepStage.allCases.map { max(durations[$0], 0) }
        if values.reduce(0, { $0.plus($1) }) >= Int64.max / 128 {
            values = values.map { $0 / (Int64.max / 1_000_000_000) }  // absurd input: keep the ratios, avoid overflow
        }
        let total = values.reduce(0, +)
        guard total > 0 else { return StagePercentages(awake: 0, light: 0, deep: 0, rem: 0) }
        var shares = values.map { 100 * $0 / total }
        let remainders = values.map { 100 * $0 % total }
        var leftover = 100 - shares.reduce(0, +)
        let byRemainder = shares.indices.sorted { remainders[$0] != remainders[$1] ? remainders[$0] > remainders[$1] : $0 < $1 }
        for index in byRemainder where leftover > 0 {
            shares[index] += 1
            leftover -= 1
        }
        return StagePercentages(awake: UInt8(clamping: shares[0]), light: UInt8(clamping: shares[1]), deep: UInt8(clamping: shares[2]), rem: UInt8(clamping: shares[3]))
    }

    /// Durations, episode counts and awakenings of items. An episode is a run of items of one
    /// stage each starting exactly where the previous ended; an awakening is an awake episode that
    /// starts after the first non-awake item.
    public static func tally(_ items: [SleepItem]) -> StageTally {
        var tally = StageTally()
        var previous: SleepItem?
        var asleepYet = false
        for item in items {
            tally.durations[item.stage] = tally.durations[item.stage].plus(item.duration)
            let continuesEpisode = previous.map { $0.stage == item.stage && $0.end == item.start } ?? false
            if !continuesEpisode {
                tally.episodes[item.stage] += 1
                if item.stage == .awake && asleepYet { tally.awakenings += 1 }
            }
            if item.stage != .awake { asleepYet = true }
            previous = item
        }
        return tally
    }

    /// The document's createSummaryFromItems: nil when `items` is empty; start and end from the
    /// first and last item, duration `end - start`.
    public static func summary(of items: [SleepItem]) -> SleepSummary? {
        guard let first = items.first, let last = items.last else { return nil }
        let start = first.start
        let end = max(last.end, start)
        return summary(start: start, end: end, timeInBed: end.minus(start), tally: tally(items))
    }

    /// A day's summary over its counted segments: durations and counts summed, start and end the
    /// earliest start and latest end, duration the sum of segment durations.
    public static func dailySummary(of segments: [SleepSegment], emptyAt instant: Int64) -> SleepSummary {
        guard let start = segments.map(\.summary.start).min(), let end = segments.map(\.summary.end).max() else {
            return .empty(at: instant)
        }
        var tally = StageTally()
        for segment in segments {
            let summary = segment.summary
            tally.durations.awake = tally.durations.awake.plus(summary.awakeDuration)
            tally.durations.light = tally.durations.light.plus(summary.lightSleepDuration)
            tally.durations.deep = tally.durations.deep.plus(summary.deepSleepDuration)
            tally.durations.rem = tally.durations.rem.plus(summary.remDuration)
            tally.episodes.awake += Int(summary.awakeCount)
            tally.episodes.light += Int(summary.lightSleepCount)
            tally.episodes.deep += Int(summary.deepSleepCount)
            tally.episodes.rem += Int(summary.remCount)
            tally.awakenings += segment.metrics.numberOfAwakenings
        }
        return summary(start: start, end: end, timeInBed: segments.reduce(0) { $0.plus($1.summary.duration) }, tally: tally)
    }

    static func summary(start: Int64, end: Int64, timeInBed: Int64, tally: StageTally) -> SleepSummary {
        let durations = tally.durations
        let totalSleep = durations.light.plus(durations.deep).plus(durations.rem)
        let shares = percentages(durations)
        return SleepSummary(
            start: start, end: end, duration: timeInBed, totalSleepDuration: totalSleep,
            awakeDuration: durations.awake, lightSleepDuration: durations.light,
            deepSleepDuration: durations.deep, remDuration: durations.rem,
            awakePercentage: shares.awake, lightSleepPercentage: shares.light,
            deepSleepPercentage: shares.deep, remPercentage: shares.rem,
            awakeCount: UInt16(clamping: tally.episodes.awake), lightSleepCount: UInt16(clamping: tally.episodes.light),
            deepSleepCount: UInt16(clamping: tally.episodes.deep), remCount: UInt16(clamping: tally.episodes.rem),
            qualityScore: SleepQuality.score(totalSleep: totalSleep, deepSleep: durations.deep, awakenings: tally.awakenings))
    }

    /// Metrics of one segment's items (the first item is where the segment starts).
    public static func metrics(of items: [SleepItem], summary: SleepSummary) -> SleepMetrics {
        let tally = tally(items)
        let onset = items.first(where: { $0.stage != .awake }).map { $0.start.minus(summary.start) } ?? 0
        return SleepMetrics(
            timeInBed: summary.duration, totalSleepDuration: summary.totalSleepDuration,
            sleepEfficiency: SleepEfficiency.ratio(asleep: summary.totalSleepDuration, inBed: summary.duration),
            sleepOnsetLatency: onset, finalWakeTime: summary.end,
            numberOfAwakenings: tally.awakenings, stageDurations: tally.durations)
    }

    /// Metrics of a day's counted segments (chronological).
    public static func dailyMetrics(of segments: [SleepSegment], summary: SleepSummary) -> SleepMetrics {
        let lastNight = segments.last(where: { $0.periodType == .night }) ?? segments.last
        return SleepMetrics(
            timeInBed: summary.duration, totalSleepDuration: summary.totalSleepDuration,
            sleepEfficiency: SleepEfficiency.ratio(asleep: summary.totalSleepDuration, inBed: summary.duration),
            sleepOnsetLatency: segments.first?.metrics.sleepOnsetLatency ?? 0,
            finalWakeTime: lastNight?.summary.end,
            numberOfAwakenings: segments.reduce(0) { $0 + $1.metrics.numberOfAwakenings },
            stageDurations: StageDurations(
                awake: summary.awakeDuration, light: summary.lightSleepDuration,
                deep: summary.deepSleepDuration, rem: summary.remDuration))
    }
}

public struct StagePercentages: Sendable, Hashable {
    public var awake: UInt8
    public var light: UInt8
    public var deep: UInt8
    public var rem: UInt8
}

public struct StageTally: Sendable, Hashable {
    public var durations = StageDurations()
    public var episodes = StageCounts()
    public var awakenings = 0
}

/// Episode counts per stage.
public typealias StageCounts = PerStage<Int>
