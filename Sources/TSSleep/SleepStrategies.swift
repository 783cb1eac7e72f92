import TSModels

/// What a strategy makes of one belonging date's items.
public struct StrategyOutcome: Sendable, Hashable {
    public var nightSleeps: [SleepSegment]
    public var daytimeSleeps: [SleepSegment]
    public var validNaps: [SleepSegment]
    /// The segments the daily summary is computed from, chronological.
    public var counted: [SleepSegment]

    public init(nightSleeps: [SleepSegment], daytimeSleeps: [SleepSegment], validNaps: [SleepSegment], counted: [SleepSegment]) {
        self.nightSleeps = nightSleeps
        self.daytimeSleeps = daytimeSleeps
        self.validNaps = validNaps
        self.counted = counted.sorted { $0.summary.start < $1.summary.start }
    }
}

/// One TopStep statistics rule. `items` are the cleaned items of one belonging date.
public protocol SleepStatisticsStrategy: Sendable {
    var rule: StatisticsRule { get }
    func analyse(_ items: [SleepItem], windows: DayWindows) -> StrategyOutcome
}

/// Rule 0: sensor window 20:00–12:00; every segment in it is night sleep; no naps. Items starting
/// 12:00–20:00 that do not continue the night are ignored.
public struct WithoutNapStrategy: SleepStatisticsStrategy {
    public init() {}
    public var rule: StatisticsRule { .withoutNap }

    public func analyse(_ items: [SleepItem], windows: DayWindows) -> StrategyOutcome {
        let parts = SleepOperations.separateNightAndDaytime(items, nightStart: windows.eveningBefore, nightEnd: windows.noon)
        let nights = SleepOperations.segments(of: parts.night, periodType: .night)
        return StrategyOutcome(nightSleeps: nights, daytimeSleeps: [], validNaps: [], counted: nights)
    }
}

/// Rule 1: night 20:00–09:00 (every night segment counts), daytime 09:00–20:00 (valid naps count).
public struct WithNapStrategy: SleepStatisticsStrategy {
    public init() {}
    public var rule: StatisticsRule { .withNap }

    public func analyse(_ items: [SleepItem], windows: DayWindows) -> StrategyOutcome {
        let parts = SleepOperations.separateNightAndDaytime(items, nightStart: windows.eveningBefore, nightEnd: windows.nine)
        let nights = SleepOperations.segments(of: parts.night, periodType: .night)
        let daytime = SleepOperations.segments(of: parts.daytime, periodType: .daytime)
        let naps = SleepOperations.validNaps(daytime)
        return StrategyOutcome(nightSleeps: nights, daytimeSleeps: daytime, validNaps: naps, counted: nights + naps)
    }
}

/// Rule 2: only the longest night segment of 20:00–08:00 is kept; daytime 08:00–20:00, valid naps
/// counted in the total.
public struct LongestNightStrategy: SleepStatisticsStrategy {
    public init() {}
    public var rule: StatisticsRule { .longestNight }

    public func analyse(_ items: [SleepItem], windows: DayWindows) -> StrategyOutcome {
        let parts = SleepOperations.separateNightAndDaytime(items, nightStart: windows.eveningBefore, nightEnd: windows.eight)
        let nights = SleepOperations.longest(SleepOperations.segments(of: parts.night, periodType: .night)).map { [$0] } ?? []
        let daytime = SleepOperations.segments(of: parts.daytime, periodType: .daytime)
        let naps = SleepOperations.validNaps(daytime)
        return StrategyOutcome(nightSleeps: nights, daytimeSleeps: daytime, validNaps: naps, counted: nights + naps)
    }
}

/// Rule 3: the longest segment of the whole 20:00–20:00 day, nothing else. Its period type follows
/// its start (night when before 09:00) and so does the list it appears in.
public struct LongestOnlyStrategy: SleepStatisticsStrategy {
    public init() {}
    public var rule: StatisticsRule { .longestOnly }

    public func analyse(_ items: [SleepItem], windows: DayWindows) -> StrategyOutcome {
        let groups = SleepOperations.splitIntoSegments(items)
        let segments = groups.compactMap { group -> SleepSegment? in
            let start = group.first?.start ?? windows.eveningBefore
            return SleepOperations.createSegment(group, periodType: start < windows.nine ? .night : .daytime)
        }
        guard let longest = SleepOperations.longest(segments) else {
            return StrategyOutcome(nightSleeps: [], daytimeSleeps: [], validNaps: [], counted: [])
        }
        return longest.periodType == .night
            ? StrategyOutcome(nightSleeps: [longest], daytimeSleeps: [], validNaps: [], counted: [longest])
            : StrategyOutcome(nightSleeps: [], daytimeSleeps: [longest], validNaps: [], counted: [longest])
    }
}

extension StatisticsRule {
    public var strategy: any SleepStatisticsStrategy {
        switch self {
        case .withoutNap: WithoutNapStrategy()
        case .withNap: WithNapStrategy()
        case .longestNight: LongestNightStrategy()
        case .longestOnly: LongestOnlyStrategy()
        }
    }
}
