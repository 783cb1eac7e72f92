import TSModels

/// What cleaning did to an input list; every received item is counted exactly once.
public struct SleepInputReport: Sendable, Hashable, Codable {
    public var received = 0
    public var kept = 0
    /// Zero or negative duration.
    public var droppedEmpty = 0
    /// Longer than `SleepInputCleaner.maximumItemDuration`.
    public var droppedOverlong = 0
    /// Start outside `SleepInputCleaner.acceptedStarts`.
    public var droppedOutOfRange = 0
    /// Same stage, start and duration as an item already kept.
    public var droppedDuplicates = 0
    /// Lies entirely inside time an earlier item already covers.
    public var droppedCovered = 0
    /// Kept, but its start moved to the end of the earlier item it overlapped.
    public var trimmedOverlaps = 0

    public init() {}

    public var dropped: Int { droppedEmpty + droppedOverlong + droppedOutOfRange + droppedDuplicates + droppedCovered }
}

/// Turns any list of raw items into a sorted timeline of non-overlapping, non-empty items.
/// Never traps: every oddity has a documented outcome (spec, "Input cleaning").
public enum SleepInputCleaner {
    /// One stage never lasts longer than a day on a real watch; longer items are corrupt records.
    public static let maximumItemDuration: Int64 = 86_400
    /// 1970-01-01T00:00:00Z up to, not including, 2100-01-01T00:00:00Z.
    public static let acceptedStarts: Range<Int64> = 0..<4_102_444_800

    public static func clean(_ items: [SleepItem]) -> (items: [SleepItem], report: SleepInputReport) {
        var report = SleepInputReport()
        report.received = items.count
        var plausible: [SleepItem] = []
        plausible.reserveCapacity(items.count)
        for item in items {
            if item.duration <= 0 {
                report.droppedEmpty += 1
            } else if item.duration > maximumItemDuration {
                report.droppedOverlong += 1
            } else if !acceptedStarts.contains(item.start) {
                report.droppedOutOfRange += 1
            } else {
                plausible.append(item)
            }
        }
        // Earlier start first; on equal starts the longer item first, then the lower stage, so the
        // outcome does not depend on the input order.
        let inOrder: (SleepItem, SleepItem) -> Bool = { lhs, rhs in
            if lhs.start != rhs.start { return lhs.start < rhs.start }
            if lhs.duration != rhs.duration { return lhs.duration > rhs.duration }
            return lhs.stage < rhs.stage
        }
        var alreadySorted = true
        for index in plausible.indices.dropFirst() where inOrder(plausible[index], plausible[index - 1]) {
            alreadySorted = false
            break
        }
        if !alreadySorted { plausible.sort(by: inOrder) }

        var kept: [SleepItem] = []
        kept.reserveCapacity(plausible.count)
        var previous: SleepItem?
        var coveredUntil = Int64.min
        for item in plausible {
            defer { previous = item }
            if item == previous {
                report.droppedDuplicates += 1
            } else if item.end <= coveredUntil {
                report.droppedCovered += 1
            } else if item.start < coveredUntil {
                report.trimmedOverlaps += 1
                kept.append(SleepItem(stage: item.stage, start: coveredUntil, duration: item.end - coveredUntil))
                coveredUntil = item.end
            } else {
                kept.append(item)
                coveredUntil = item.end
            }
        }
        report.kept = kept.count
        return (kept, report)
    }
}
