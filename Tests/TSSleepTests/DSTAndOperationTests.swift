import Foundation
import Testing
import TSModels
@testable import TSSleep

/// Example 8 of the spec: nights across DST changes keep real durations and local windows.
@Suite struct DaylightSavingTests {
    @Test func berlinSpringForward() throws {
        // 2026-03-29 02:00 CET becomes 03:00 CEST: 23:00 → 07:00 on the wall clock is 7 hours.
        let night = item(.light, at("2026-03-28 23:00"), minutes: 420)
        let nap = item(.light, at("2026-03-29 09:30"), minutes: 40)
        #expect(night.end == at("2026-03-29 07:00"))
        let model = try #require(SleepProcessor.process([night, nap], rule: .withNap, timeZone: Zone.berlin).first)
        #expect(model.date.description == "2026-03-29")
        #expect(model.nightSleeps.map(\.summary.duration) == [25_200])
        #expect(model.validNaps.map(\.summary.start) == [nap.start], "09:30 CEST is daytime, though it is 08:30 by the winter offset")
        let windows = LocalDayClock(timeZone: Zone.berlin).windows(for: model.date)
        #expect(windows.nine - windows.eveningBefore == 12 * 3600, "20:00 CET to 09:00 CEST is 12 real hours")
    }

    @Test func berlinFallBack() {
        // 2026-10-25 03:00 CEST becomes 02:00 CET: 23:00 → 07:00 on the wall clock is 9 hours.
        let night = item(.light, at("2026-10-24 23:00"), minutes: 540)
        let evening = item(.light, at("2026-10-25 19:30"), minutes: 20)
        let later = item(.light, at("2026-10-25 20:15"), minutes: 30)
        #expect(night.end == at("2026-10-25 07:00"))
        let days = SleepProcessor.process([night, evening, later], rule: .withNap, timeZone: Zone.berlin)
        #expect(days.map(\.date.description) == ["2026-10-25", "2026-10-26"])
        #expect(days.first?.nightSleeps.map(\.summary.duration) == [32_400])
        #expect(days.first?.daytimeSleeps.map(\.summary.start) == [evening.start], "19:30 CET is still the 25th")
        #expect(days.last?.nightSleeps.map(\.summary.start) == [later.start])
    }

    @Test func newYorkSpringForward() throws {
        // 2026-03-08 02:00 EST becomes 03:00 EDT.
        let night = item(.light, at("2026-03-07 23:00", Zone.newYork), minutes: 420)
        let nap = item(.light, at("2026-03-08 09:30", Zone.newYork), minutes: 40)
        #expect(night.end == at("2026-03-08 07:00", Zone.newYork))
        let model = try #require(SleepProcessor.process([night, nap], rule: .withNap, timeZone: Zone.newYork).first)
        #expect(model.date.description == "2026-03-08")
        #expect(model.nightSleeps.map(\.summary.duration) == [25_200])
        #expect(model.validNaps.map(\.summary.start) == [nap.start])
        #expect(model.belongingDate == at("2026-03-08 00:00", Zone.newYork))
    }

    @Test func newYorkFallBack() {
        // 2026-11-01 02:00 EDT becomes 01:00 EST.
        let night = item(.light, at("2026-10-31 23:00", Zone.newYork), minutes: 540)
        let evening = item(.light, at("2026-11-01 19:30", Zone.newYork), minutes: 20)
        let later = item(.light, at("2026-11-01 20:15", Zone.newYork), minutes: 30)
        #expect(night.end == at("2026-11-01 07:00", Zone.newYork))
        let days = SleepProcessor.process([night, evening, later], rule: .withNap, timeZone: Zone.newYork)
        #expect(days.map(\.date.description) == ["2026-11-01", "2026-11-02"])
        #expect(days.first?.nightSleeps.map(\.summary.duration) == [32_400])
        #expect(days.first?.daytimeSleeps.map(\.summary.start) == [evening.start])
        #expect(days.last?.nightSleeps.map(\.summary.start) == [later.start])
    }

    @Test func sameInstantsGiveDifferentDatesInDifferentZones() {
        let instant = at("2026-01-15 19:30", Zone.utc)  // 20:30 in Berlin, 14:30 in New York
        #expect(LocalDayClock(timeZone: Zone.berlin).belongingDate(of: instant).description == "2026-01-16")
        #expect(LocalDayClock(timeZone: Zone.newYork).belongingDate(of: instant).description == "2026-01-15")
    }
}

@Suite struct BaseOperationTests {
    let t0 = at("2026-01-14 23:00")

    @Test func removeTrailingAwake() {
        let items = run(from: t0, [(.awake, 5), (.light, 10), (.awake, 5), (.deep, 10), (.awake, 5), (.awake, 5)])
        #expect(SleepOperations.removeTrailingAwake(items) == Array(items.prefix(4)))
        #expect(SleepOperations.removeTrailingAwake(run(from: t0, [(.awake, 5)])).isEmpty)
        #expect(SleepOperations.removeTrailingAwake([]).isEmpty)
    }

    @Test func isAdjacentToNightSleep() {
        let night = run(from: t0, [(.light, 60), (.awake, 20)])  // sleep ends 00:00
        #expect(SleepOperations.isAdjacentToNightSleep(SleepItem(stage: .light, start: t0 + 3_600 + 1_799, duration: 60), nightItems: night))
        #expect(!SleepOperations.isAdjacentToNightSleep(SleepItem(stage: .light, start: t0 + 3_600 + 1_800, duration: 60), nightItems: night))
        #expect(!SleepOperations.isAdjacentToNightSleep(item(.light, t0, minutes: 1), nightItems: run(from: t0, [(.awake, 10)])))
    }

    @Test func separateNightAndDaytime() {
        let nightEnd = at("2026-01-15 09:00")
        let items = run(from: at("2026-01-15 08:00"), [(.light, 70)])  // crosses 09:00: night by its start
            + [item(.awake, at("2026-01-15 09:20"), minutes: 10), item(.light, at("2026-01-15 09:35"), minutes: 10),
               item(.light, at("2026-01-15 10:30"), minutes: 30), item(.light, at("2026-01-15 10:59"), minutes: 10)]
        let parts = SleepOperations.separateNightAndDaytime(items, nightStart: at("2026-01-14 20:00"), nightEnd: nightEnd)
        #expect(parts.night == Array(items.prefix(3)))
        #expect(parts.daytime == Array(items.suffix(2)), "once the night has ended, later items stay daytime")
    }

    @Test func splitIntoSegmentsKeepsShortLeadingAwakeOnly() {
        let items = [item(.awake, t0, minutes: 40), item(.awake, t0 + 2_400, minutes: 20), item(.light, t0 + 3_600, minutes: 60),
                     item(.awake, t0 + 7_200, minutes: 10)]
        let groups = SleepOperations.splitIntoSegments(items)
        #expect(groups == [[items[1], items[2]]], "the awake item starting 60 min before sleep and the trailing one are left out")
    }

    @Test func createSegmentNeedsSleep() {
        #expect(SleepOperations.createSegment(run(from: t0, [(.awake, 30)]), periodType: .night) == nil)
        let segment = SleepOperations.createSegment(run(from: t0, [(.light, 30), (.awake, 10)]), periodType: .daytime)
        #expect(segment?.periodType == .daytime && segment?.summary.duration == 1_800 && segment?.detailItems.count == 1)
    }

    @Test func filterSegmentsByDurationIsExclusiveBelowInclusiveAbove() {
        let segments = [10, 20, 21, 60].compactMap { SleepOperations.createSegment([item(.light, t0, minutes: $0)], periodType: .daytime) }
        let kept = SleepOperations.filterSegments(segments, minimumExclusive: 1_200, maximumInclusive: 3_600)
        #expect(kept.map(\.summary.duration) == [1_260, 3_600])
    }

    @Test func createSummaryCountsEpisodesAcrossGaps() throws {
        let items = [item(.light, t0, minutes: 10), item(.light, t0 + 600, minutes: 10), item(.light, t0 + 1_260, minutes: 10)]
        let summary = try #require(SleepOperations.createSummary(items))
        #expect(summary.lightSleepCount == 2, "contiguous items merge; a one-minute gap starts a new episode")
        #expect(summary.duration == 1_860 && summary.totalSleepDuration == 1_800)
        #expect(SleepOperations.createSummary([]) == nil)
    }

    @Test func percentagesUseLargestRemainder() {
        let thirds = SleepSummaryBuilder.percentages(StageDurations(awake: 0, light: 100, deep: 100, rem: 100))
        #expect([thirds.awake, thirds.light, thirds.deep, thirds.rem] == [0, 34, 33, 33])
        let none = SleepSummaryBuilder.percentages(StageDurations())
        #expect([none.awake, none.light, none.deep, none.rem] == [0, 0, 0, 0])
    }

    @Test func qualityScoreFormulaAndDirections() {
        #expect(SleepQuality.score(totalSleep: 0, deepSleep: 0, awakenings: 0) == 0)
        #expect(SleepQuality.score(totalSleep: 8 * 3600, deepSleep: 2 * 3600, awakenings: 0) == 100)
        #expect(SleepQuality.score(totalSleep: 10 * 3600, deepSleep: 10 * 3600, awakenings: 0) == 100)
        #expect(SleepQuality.score(totalSleep: 4 * 3600, deepSleep: 0, awakenings: 9) == 25)
        var previous: UInt8 = 0
        for hours in stride(from: Int64(1), through: 10, by: 1) {  // deep share fixed at 20 %
            let score = SleepQuality.score(totalSleep: hours * 3600, deepSleep: hours * 720, awakenings: 2)
            #expect(score >= previous)
            previous = score
        }
        previous = 100
        for awakenings in 0...8 {
            let score = SleepQuality.score(totalSleep: 7 * 3600, deepSleep: 3600, awakenings: awakenings)
            #expect(score <= previous)
            previous = score
        }
        previous = 0
        for deepMinutes in stride(from: Int64(0), through: 420, by: 30) {
            let score = SleepQuality.score(totalSleep: 7 * 3600, deepSleep: deepMinutes * 60, awakenings: 1)
            #expect(score >= previous)
            previous = score
        }
    }

    @Test func epochsMarkGapsWithMinusOne() {
        let items = [SleepItem(stage: .light, start: t0, duration: 45), SleepItem(stage: .deep, start: t0 + 45, duration: 20),
                     SleepItem(stage: .rem, start: t0 + 120, duration: 15)]
        let epochs = SleepEpochBuilder.epochs(of: items, from: t0, to: t0 + 135)
        // [0,30) light; [30,60) light 15 s vs deep 15 s → light (first seen); [60,90) deep 5 s vs 25 s gap → -1;
        // [90,120) nothing → -1; [120,135) rem 15 of 15 s.
        #expect(epochs.stages == [1, 1, -1, -1, 3])
        #expect(SleepEpochBuilder.epochs(of: items, from: t0, to: t0).stages.isEmpty)
    }

    @Test func healthKitMapping() throws {
        let segment = try #require(SleepOperations.createSegment(run(from: t0, [(.awake, 5), (.light, 10), (.deep, 10), (.rem, 10)]), periodType: .night))
        let samples = segment.healthKitSamples
        #expect(samples.map(\.value) == [.inBed, .awake, .asleepCore, .asleepDeep, .asleepREM])
        #expect(samples.map(\.value.rawValue) == ["in_bed", "awake", "core", "deep", "rem"])
        #expect(samples.map(\.value.healthKitRawValue) == [0, 2, 3, 4, 5])
        #expect(samples.first?.start == t0 && samples.first?.end == t0 + 35 * 60)
    }
}

@Suite struct StrategyEdgeTests {
    @Test func longestOnlyPutsADaytimeWinnerInDaytimeSleeps() throws {
        let items = [item(.light, at("2026-01-15 03:00"), minutes: 60), item(.light, at("2026-01-15 10:00"), minutes: 120)]
        let model = try #require(SleepProcessor.process(items, rule: .longestOnly, timeZone: Zone.berlin).first)
        #expect(model.nightSleeps.isEmpty)
        #expect(model.daytimeSleeps.map(\.summary.start) == [at("2026-01-15 10:00")])
        #expect(model.daytimeSleeps.first?.periodType == .daytime)
        #expect(model.validNaps.isEmpty, "rule 3 has no naps")
        #expect(model.dailySummary.totalSleepDuration == 7_200)
    }

    @Test func equallyLongSegmentsPreferTheEarlier() throws {
        let items = [item(.light, at("2026-01-14 22:00"), minutes: 60), item(.deep, at("2026-01-15 02:00"), minutes: 60)]
        for rule in [StatisticsRule.longestNight, .longestOnly] {
            let model = try #require(SleepProcessor.process(items, rule: rule, timeZone: Zone.berlin).first)
            #expect(model.nightSleeps.map(\.summary.start) == [at("2026-01-14 22:00")])
        }
    }

    @Test func withoutNapIgnoresAfternoonButKeepsANightRunningPastNoon() throws {
        let items = run(from: at("2026-01-15 04:00"), [(.light, 490)]) + run(from: at("2026-01-15 12:20"), [(.light, 20)])
            + [item(.light, at("2026-01-15 15:00"), minutes: 60)]
        let model = try #require(SleepProcessor.process(items, rule: .withoutNap, timeZone: Zone.berlin).first)
        #expect(model.nightSleeps.map(\.summary.duration) == [31_200], "04:00–12:10 and 12:20–12:40 are one night; 15:00 is ignored")
        #expect(model.daytimeSleeps.isEmpty && model.rawItems.count == 3)
    }
}

@Suite struct SkippedMidnightTests {
    /// São Paulo started DST at midnight on 2018-11-04: 00:00 did not exist, the day began at 01:00 -02.
    @Test func belongingDateIsTheFirstInstantOfTheDay() throws {
        let zone = try #require(TimeZone(identifier: "America/Sao_Paulo"))
        let clock = LocalDayClock(timeZone: zone)
        let date = LocalDate(year: 2018, month: 11, day: 4)
        #expect(clock.startOfDate(date) == 1_541_300_400)  // 2018-11-04T03:00:00Z
        let windows = clock.windows(for: date)
        #expect(windows.evening - windows.eveningBefore == 23 * 3600)
        let night = SleepItem(stage: .light, start: windows.eveningBefore + 3_600, duration: 6 * 3600)
        let model = try #require(SleepProcessor.process([night], rule: .withNap, timeZone: zone).first)
        #expect(model.date == date && model.belongingDate == 1_541_300_400 && model.nightSleeps.count == 1)
    }
}
