import TSModels

/// The base operations every strategy is built from. Inputs are cleaned items
/// (chronological, non-overlapping); each operation is total and never traps.
public enum SleepOperations {
    /// An awake-or-unrecorded run this long (or longer) between two sleep items splits a segment.
    public static let splittingAwakeSeconds: Int64 = 30 * 60
    /// Naps are valid when longer than this…
    public static let napMinimumExclusiveSeconds: Int64 = 20 * 60
    /// …and no longer than this.
    public static let napMaximumInclusiveSeconds: Int64 = 3 * 3600

    /// Drops awake items after the last non-awake item (all of them when there is none).
    public static func removeTrailingAwake(_ items: [SleepItem]) -> [SleepItem] {
        guard let lastSleep = items.lastIndex(where: { $0.stage != .awake }) else { return [] }
        return Array(items[...lastSleep])
    }

    /// Whether `item` continues the night: it starts less than 30 minutes after the end of the
    /// last non-awake item of `nightItems`.
    public static func isAdjacentToNightSleep(_ item: SleepItem, nightItems: [SleepItem]) -> Bool {
        guard let lastSleep = nightItems.last(where: { $0.stage != .awake }) else { return false }
        return item.start.minus(lastSleep.end) < splittingAwakeSeconds
    }

    /// Items starting in `[nightStart, nightEnd)` are night items; so are the items after
    /// `nightEnd` that continue the night without a break (each adjacent to night sleep in turn).
    /// Everything else is a daytime item. Attribution is by start time: no item is cut.
    public static func separateNightAndDaytime(
        _ items: [SleepItem], nightStart: Int64, nightEnd: Int64
    ) -> (night: [SleepItem], daytime: [SleepItem]) {
        var night: [SleepItem] = []
        var daytime: [SleepItem] = []
        var lastNightSleepEnd: Int64?
        var nightStillContinues = true
        for item in items {
            if item.start >= nightStart && item.start < nightEnd {
                night.append(item)
            } else if item.start >= nightEnd, nightStillContinues,
                      let sleepEnd = lastNightSleepEnd, item.start.minus(sleepEnd) < splittingAwakeSeconds {
                night.append(item)
            } else {
                if item.start >= nightEnd { nightStillContinues = false }
                daytime.append(item)
                continue
            }
            if item.stage != .awake { lastNightSleepEnd = item.end }
        }
        return (night, daytime)
    }

    /// Splits at every awake-or-unrecorded run of 30 minutes or more between two non-awake items.
    /// Each group keeps its interior awake items and the awake items that start less than 30
    /// minutes before its first non-awake item; trailing awake items belong to no group.
    public static func splitIntoSegments(_ items: [SleepItem]) -> [[SleepItem]] {
        var groups: [[SleepItem]] = []
        var current: [SleepItem] = []
        var pendingAwake: [SleepItem] = []
        var lastSleepEnd: Int64?
        for item in items {
            if item.stage == .awake {
                pendingAwake.append(item)
                continue
            }
            if let sleepEnd = lastSleepEnd, item.start.minus(sleepEnd) < splittingAwakeSeconds {
                current.append(contentsOf: pendingAwake)
            } else {
                if !current.isEmpty { groups.append(current) }
                current = pendingAwake.filter { item.start.minus($0.start) < splittingAwakeSeconds }
            }
            pendingAwake.removeAll(keepingCapacity: true)
            current.append(item)
            lastSleepEnd = item.end
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }

    /// A segment from a group of items; nil when no non-awake item remains after removing
    /// trailing awake items.
    public static func createSegment(_ items: [SleepItem], periodType: SleepPeriodType) -> SleepSegment? {
        let trimmed = removeTrailingAwake(items)
        guard let summary = createSummary(trimmed) else { return nil }
        return SleepSegment(
            periodType: periodType,
            summary: summary,
            metrics: SleepSummaryBuilder.metrics(of: trimmed, summary: summary),
            detailItems: trimmed,
            epochs: SleepEpochBuilder.epochs(of: trimmed, from: summary.start, to: summary.end))
    }

    /// Keeps segments with `minimumExclusive < duration <= maximumInclusive`.
    public static func filterSegments(
        _ segments: [SleepSegment], minimumExclusive: Int64, maximumInclusive: Int64
    ) -> [SleepSegment] {
        segments.filter { $0.summary.duration > minimumExclusive && $0.summary.duration <= maximumInclusive }
    }

    /// The valid naps among daytime segments: 20 min < duration ≤ 3 h.
    public static func validNaps(_ segments: [SleepSegment]) -> [SleepSegment] {
        filterSegments(segments, minimumExclusive: napMinimumExclusiveSeconds, maximumInclusive: napMaximumInclusiveSeconds)
    }

    /// The document's createSummaryFromItems; nil for no items.
    public static func createSummary(_ items: [SleepItem]) -> SleepSummary? {
        SleepSummaryBuilder.summary(of: items)
    }

    /// Segments of `items`, each of `periodType`.
    public static func segments(of items: [SleepItem], periodType: SleepPeriodType) -> [SleepSegment] {
        splitIntoSegments(items).compactMap { createSegment($0, periodType: periodType) }
    }

    /// The longest segment by duration; the earliest of equally long ones.
    public static func longest(_ segments: [SleepSegment]) -> SleepSegment? {
        var best: SleepSegment?
        for segment in segments where segment.summary.duration > (best?.summary.duration ?? -1) {
            best = segment
        }
        return best
    }
}

/// 30-second epoch arrays (Asleep-style) from items.
public enum SleepEpochBuilder {
    public static let defaultEpochSeconds: Int64 = 30
    /// Longest span an epoch array covers; the processor's segments never come close (a date's
    /// items start within 25 hours and last at most 24), so only absurd direct calls are cut.
    public static let maximumSpanSeconds: Int64 = 4 * 86_400

    /// Epoch i covers `[start + i*epochSeconds, ...)`, the last one cut at `end`. Its value is the
    /// stage covering most seconds of it (on a tie, the stage seen first in the epoch), or -1
    /// when unrecorded seconds outnumber every stage's.
    public static func epochs(of items: [SleepItem], from start: Int64, to end: Int64, epochSeconds: Int64 = defaultEpochSeconds) -> SleepEpochs {
        guard end > start, epochSeconds > 0 else { return SleepEpochs(start: start, epochSeconds: epochSeconds, stages: []) }
        let end = min(end, start.plus(maximumSpanSeconds))
        let span = end.minus(start)
        let count = span / epochSeconds + (span % epochSeconds == 0 ? 0 : 1)
        var stages: [Int8] = []
        stages.reserveCapacity(Int(count))
        var firstCandidate = 0
        for epoch in 0..<count {
            let epochStart = start.plus(epoch.times(epochSeconds))
            let epochEnd = min(epochStart.plus(epochSeconds), end)
            while firstCandidate < items.count && items[firstCandidate].end <= epochStart { firstCandidate += 1 }
            var covered: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
            var order: [SleepStage] = []
            var index = firstCandidate
            while index < items.count && items[index].start < epochEnd {
                let item = items[index]
                let seconds = min(item.end, epochEnd).minus(max(item.start, epochStart))
                if seconds > 0 {
                    switch item.stage {
                    case .awake: covered.0 = covered.0.plus(seconds)
                    case .light: covered.1 = covered.1.plus(seconds)
                    case .deep: covered.2 = covered.2.plus(seconds)
                    case .rem: covered.3 = covered.3.plus(seconds)
                    }
                    if !order.contains(item.stage) { order.append(item.stage) }
                }
                index += 1
            }
            func seconds(_ stage: SleepStage) -> Int64 {
                switch stage {
                case .awake: covered.0
                case .light: covered.1
                case .deep: covered.2
                case .rem: covered.3
                }
            }
            var best: SleepStage?
            for stage in order where best.map({ seconds(stage) > seconds($0) }) ?? true { best = stage }
            let unrecorded = epochEnd.minus(epochStart).minus(covered.0.plus(covered.1).plus(covered.2).plus(covered.3))
            if let best, seconds(best) >= unrecorded {
                stages.append(Int8(best.rawValue))
            } else {
                stages.append(-1)
            }
        }
        return SleepEpochs(start: start, epochSeconds: epochSeconds, stages: stages)
    }
}
