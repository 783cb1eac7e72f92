import Foundation
import Testing
import TSModels
@testable import TSSleep

/// The worked examples of protocol-spec/sleep-statistics.md, one test each, same numbers.
@Suite struct GoldenNightTests {
    /// Example 1: a plain night.
    static let plainNight = run(from: at("2026-01-14 22:50"), [
        (.awake, 10), (.light, 90), (.deep, 60), (.rem, 30), (.awake, 10),
        (.light, 120), (.deep, 30), (.rem, 60), (.light, 50), (.awake, 15),
    ])

    @Test func example1PlainNight() throws {
        let days = SleepProcessor.process(Self.plainNight, rule: .withNap, timeZone: Zone.berlin)
        #expect(days.map(\.date.description) == ["2026-01-15"])
        let model = try #require(days.first)
        #expect(model.belongingDate == at("2026-01-15 00:00"))
        #expect(model.nightSleeps.count == 1)
        #expect(model.daytimeSleeps.isEmpty && model.validNaps.isEmpty)
        #expect(model.rawItems.count == 10)
        let night = try #require(model.nightSleeps.first)
        #expect(night.periodType == .night)
        #expect(night.detailItems.count == 9, "the trailing 15 min awake item is removed")
        let s = night.summary
        #expect(s.start == at("2026-01-14 22:50") && s.end == at("2026-01-15 06:30"))
        #expect(s.duration == 27_600 && s.totalSleepDuration == 26_400)
        #expect([s.awakeDuration, s.lightSleepDuration, s.deepSleepDuration, s.remDuration] == [1_200, 15_600, 5_400, 5_400])
        #expect([s.awakePercentage, s.lightSleepPercentage, s.deepSleepPercentage, s.remPercentage] == [4, 56, 20, 20])
        #expect([s.awakeCount, s.lightSleepCount, s.deepSleepCount, s.remCount] == [2, 3, 2, 2])
        #expect(s.qualityScore == 85)
        #expect(model.dailySummary == s)
        let m = night.metrics
        #expect(m.sleepOnsetLatency == 600 && m.numberOfAwakenings == 1 && m.finalWakeTime == at("2026-01-15 06:30"))
        #expect(abs(m.sleepEfficiency - 26_400.0 / 27_600.0) < 1e-12)
        #expect(night.epochs.stages.count == 27_600 / 30)
        #expect(night.epochs.stages.prefix(20).allSatisfy { $0 == 0 } && night.epochs.stages[20] == 1)
    }

    /// Example 2: an awake run of exactly 30 minutes splits; 29:59 does not.
    @Test func example2ThirtyMinuteAwakeSplits() throws {
        let start = at("2026-01-14 23:00")
        let items = [item(.light, start, minutes: 120), item(.awake, start + 7_200, minutes: 30), item(.light, start + 9_000, minutes: 90)]
        let model = try #require(SleepProcessor.process(items, rule: .withNap, timeZone: Zone.berlin).first)
        #expect(model.nightSleeps.map(\.summary.duration) == [7_200, 5_400])
        #expect(model.nightSleeps.map { $0.detailItems.count } == [1, 1], "the 30 min awake item joins neither segment")
        #expect(model.dailySummary.duration == 12_600 && model.dailySummary.totalSleepDuration == 12_600 && model.dailySummary.awakeDuration == 0)
    }

    @Test func example2AwakeOf29Minutes59SecondsDoesNotSplit() throws {
        let start = at("2026-01-14 23:00")
        let items = [
            item(.light, start, minutes: 120),
            SleepItem(stage: .awake, start: start + 7_200, duration: 1_799),
            SleepItem(stage: .light, start: start + 8_999, duration: 5_401),
        ]
        let model = try #require(SleepProcessor.process(items, rule: .withNap, timeZone: Zone.berlin).first)
        #expect(model.nightSleeps.count == 1)
        let s = try #require(model.nightSleeps.first?.summary)
        #expect(s.duration == 14_400 && s.totalSleepDuration == 12_601 && s.awakeDuration == 1_799 && s.awakeCount == 1)
    }

    @Test func example2UnrecordedGapOf30MinutesSplitsToo() {
        let start = at("2026-01-14 23:00")
        let split = SleepOperations.splitIntoSegments([item(.light, start, minutes: 60), item(.light, start + 5_400, minutes: 60)])
        let joined = SleepOperations.splitIntoSegments([item(.light, start, minutes: 60), item(.light, start + 5_399, minutes: 60)])
        #expect(split.count == 2 && joined.count == 1)
    }

    /// Example 3: nap validity at its four edges (rule 1, a lone nap at 14:00).
    @Test(arguments: [(Int64(1_200), false), (1_201, true), (10_800, true), (10_801, false)])
    func example3NapValidity(seconds: Int64, valid: Bool) throws {
        let nap = SleepItem(stage: .light, start: at("2026-01-15 14:00"), duration: seconds)
        let model = try #require(SleepProcessor.process([nap], rule: .withNap, timeZone: Zone.berlin).first)
        #expect(model.daytimeSleeps.map(\.summary.duration) == [seconds])
        #expect(model.daytimeSleeps.first?.periodType == .daytime)
        #expect(model.validNaps.count == (valid ? 1 : 0))
        #expect(model.dailySummary.totalSleepDuration == (valid ? seconds : 0))
        if !valid { #expect(model.dailySummary == .empty(at: at("2026-01-14 20:00"))) }
    }

    /// Example 4: 21:00 on the 19th belongs to the 20th; 19:59:59 still to the 19th.
    @Test func example4TwentyOClockBoundary() {
        let late = item(.light, at("2026-01-19 21:00"), minutes: 60)
        let early = SleepItem(stage: .light, start: at("2026-01-19 19:59:59"), duration: 1)
        let exact = item(.light, at("2026-01-19 20:00"), minutes: 1)
        let clock = LocalDayClock(timeZone: Zone.berlin)
        #expect(clock.belongingDate(of: late.start).description == "2026-01-20")
        #expect(clock.belongingDate(of: exact.start).description == "2026-01-20")
        #expect(clock.belongingDate(of: early.start).description == "2026-01-19")
        let days = SleepProcessor.process([late, early], rule: .withNap, timeZone: Zone.berlin)
        #expect(days.map(\.date.description) == ["2026-01-19", "2026-01-20"])
        #expect(days.last?.belongingDate == at("2026-01-20 00:00"))
    }

    /// Example 5: a nap straddling 20:00 is cut by the day boundary, never by an item.
    @Test func example5SegmentStraddlingTwentyOClock() {
        let straddling = item(.light, at("2026-01-15 19:30"), minutes: 60)
        let whole = SleepProcessor.process([straddling], rule: .withNap, timeZone: Zone.berlin)
        #expect(whole.map(\.date.description) == ["2026-01-15"])
        #expect(whole.first?.validNaps.map(\.summary.duration) == [3_600])

        let split = SleepProcessor.process(run(from: at("2026-01-15 19:30"), [(.light, 30), (.light, 30)]), rule: .withNap, timeZone: Zone.berlin)
        #expect(split.map(\.date.description) == ["2026-01-15", "2026-01-16"])
        #expect(split.first?.validNaps.map(\.summary.duration) == [1_800])
        #expect(split.last?.nightSleeps.map(\.summary.duration) == [1_800])
    }

    /// Example 6: a night running past 09:00 stays one night segment (adjacency), in rules 1 and 2.
    @Test func example6NightContinuingPastTheWindowEdge() {
        let items = run(from: at("2026-01-14 23:00"), [(.light, 590), (.awake, 15), (.light, 55)])
        for rule in [StatisticsRule.withNap, .longestNight] {
            let model = SleepProcessor.process(items, rule: rule, timeZone: Zone.berlin).first
            #expect(model?.nightSleeps.count == 1)
            #expect(model?.nightSleeps.first?.summary.end == at("2026-01-15 10:00"))
            #expect(model?.daytimeSleeps.isEmpty == true)
        }
    }

    /// Example 7: one input through all four rules.
    static let fourRuleDay: [SleepItem] =
        run(from: at("2026-01-14 22:00"), [(.light, 120), (.awake, 45), (.deep, 60), (.light, 255)])
        + [item(.light, at("2026-01-15 08:30"), minutes: 60), item(.light, at("2026-01-15 13:00"), minutes: 90), item(.light, at("2026-01-15 16:00"), minutes: 10)]

    @Test func example7AllFourRules() throws {
        func model(_ rule: StatisticsRule) throws -> DailySleepModel {
            let days = SleepProcessor.process(Self.fourRuleDay, rule: rule, timeZone: Zone.berlin)
            #expect(days.count == 1)
            return try #require(days.first)
        }
        let rule0 = try model(.withoutNap)
        #expect(rule0.nightSleeps.map(\.summary.duration) == [7_200, 18_900, 3_600])
        #expect(rule0.daytimeSleeps.isEmpty && rule0.validNaps.isEmpty)
        let rule1 = try model(.withNap)
        #expect(rule1.nightSleeps.map(\.summary.duration) == [7_200, 18_900, 3_600])
        #expect(rule1.daytimeSleeps.map(\.summary.duration) == [5_400, 600])
        #expect(rule1.validNaps.map(\.summary.duration) == [5_400])
        let rule2 = try model(.longestNight)
        #expect(rule2.nightSleeps.map(\.summary.duration) == [18_900])
        #expect(rule2.daytimeSleeps.map(\.summary.duration) == [3_600, 5_400, 600])
        #expect(rule2.validNaps.map(\.summary.duration) == [3_600, 5_400])
        let rule3 = try model(.longestOnly)
        #expect(rule3.nightSleeps.map(\.summary.duration) == [18_900])
        #expect(rule3.daytimeSleeps.isEmpty && rule3.validNaps.isEmpty)

        let expected: [(DailySleepModel, start: String, end: String, total: Int64, light: UInt8, deep: UInt8, quality: UInt8)] = [
            (rule0, "2026-01-14 22:00", "2026-01-15 09:30", 29_700, 88, 12, 84),
            (rule1, "2026-01-14 22:00", "2026-01-15 14:30", 35_100, 90, 10, 82),
            (rule2, "2026-01-15 00:45", "2026-01-15 14:30", 27_900, 87, 13, 83),
            (rule3, "2026-01-15 00:45", "2026-01-15 06:00", 18_900, 81, 19, 74),
        ]
        for row in expected {
            let s = row.0.dailySummary
            #expect(s.start == at(row.start) && s.end == at(row.end), "rule \(row.0.statisticsRule.rawValue)")
            #expect(s.duration == row.total && s.totalSleepDuration == row.total, "rule \(row.0.statisticsRule.rawValue)")
            #expect(s.deepSleepDuration == 3_600 && s.awakeDuration == 0, "rule \(row.0.statisticsRule.rawValue)")
            #expect(s.lightSleepPercentage == row.light && s.deepSleepPercentage == row.deep, "rule \(row.0.statisticsRule.rawValue)")
            #expect(s.qualityScore == row.quality, "rule \(row.0.statisticsRule.rawValue)")
        }
    }

    /// Example 9: messy input is cleaned the documented way.
    @Test func example9MessyInputIsCleaned() {
        let start = at("2026-01-14 23:00")
        let messy = [
            item(.deep, start + 5_400, minutes: 90),        // overlaps the light item by 30 min: trimmed
            item(.light, start, minutes: 120),
            item(.light, start, minutes: 120),              // duplicate
            item(.rem, start, minutes: 10),                 // same start, shorter: covered
            SleepItem(stage: .rem, start: start + 20_000, duration: 0),
            SleepItem(stage: .rem, start: start + 20_000, duration: -60),
            SleepItem(stage: .light, start: start + 30_000, duration: 86_401),
            SleepItem(stage: .light, start: -5, duration: 60),
        ]
        let (cleaned, report) = SleepInputCleaner.clean(messy)
        #expect(cleaned == [item(.light, start, minutes: 120), item(.deep, start + 7_200, minutes: 60)])
        #expect(report.received == 8 && report.kept == 2 && report.trimmedOverlaps == 1)
        #expect(report.droppedDuplicates == 1 && report.droppedCovered == 1 && report.droppedEmpty == 2)
        #expect(report.droppedOverlong == 1 && report.droppedOutOfRange == 1)
        #expect(report.kept + report.dropped == report.received)
        #expect(SleepInputCleaner.clean(messy.reversed()).items == cleaned, "order of input does not matter")
        let exactlyADay = SleepItem(stage: .light, start: start, duration: 86_400)
        #expect(SleepInputCleaner.clean([exactlyADay]).items == [exactlyADay])
    }
}
