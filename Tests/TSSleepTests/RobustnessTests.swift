import Foundation
import Testing
import TSModels
@testable import TSSleep

/// A small deterministic generator (SplitMix64) so the randomized test is reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RobustnessTests {
    @Test func extremeValuesNeverTrap() {
        let extremes: [SleepItem] = [
            SleepItem(stage: .light, start: .max, duration: .max),
            SleepItem(stage: .deep, start: .min, duration: .max),
            SleepItem(stage: .rem, start: .max - 10, duration: 20),
            SleepItem(stage: .awake, start: 0, duration: .min),
            SleepItem(stage: .light, start: 0, duration: 86_400),
            SleepItem(stage: .light, start: 4_102_444_799, duration: 86_400),
        ]
        for rule in StatisticsRule.allCases {
            let (days, report) = SleepProcessor.analyse(extremes, rule: rule, timeZone: Zone.berlin)
            #expect(report.kept == 2 && report.droppedOverlong == 2 && report.droppedEmpty == 1 && report.droppedOutOfRange == 1)
            #expect(days.count == 2)
        }
        #expect(SleepProcessor.process([], rule: .withNap, timeZone: Zone.berlin).isEmpty)
    }

    /// The base operations are public, so they too must survive uncleaned, absurd items.
    @Test func baseOperationsSurviveUncleanedItems() {
        let absurd: [SleepItem] = [
            SleepItem(stage: .light, start: .max, duration: .max),
            SleepItem(stage: .awake, start: .min, duration: .max),
            SleepItem(stage: .deep, start: .min, duration: .min),
            SleepItem(stage: .rem, start: 0, duration: .max),
            SleepItem(stage: .light, start: .max - 1, duration: 10),
            SleepItem(stage: .deep, start: 100, duration: -50),
        ]
        for ordering in [absurd, absurd.reversed(), absurd.sorted { $0.start < $1.start }] {
            let groups = SleepOperations.splitIntoSegments(ordering)
            let segments = groups.compactMap { SleepOperations.createSegment($0, periodType: .night) }
            #expect(groups.flatMap { $0 }.count <= ordering.count)
            for segment in segments {
                #expect(segment.summary.qualityScore <= 100)
                #expect(segment.epochs.stages.count <= Int(SleepEpochBuilder.maximumSpanSeconds / 30))
            }
            let parts = SleepOperations.separateNightAndDaytime(ordering, nightStart: .min, nightEnd: 0)
            #expect(parts.night.count + parts.daytime.count == ordering.count)
            _ = SleepOperations.isAdjacentToNightSleep(ordering[0], nightItems: ordering)
            let summary = SleepOperations.createSummary(ordering)
            #expect(summary.map { Int($0.awakePercentage) + Int($0.lightSleepPercentage) + Int($0.deepSleepPercentage) + Int($0.remPercentage) <= 100 } == true)
            _ = SleepSummaryBuilder.dailySummary(of: segments + segments, emptyAt: 0)
        }
        #expect(SleepItem(stage: .light, start: .max, duration: 5).end == .max)
        #expect(SleepEpochBuilder.epochs(of: [], from: 0, to: 100, epochSeconds: .max).stages == [-1])
        #expect(SleepQuality.score(totalSleep: .max, deepSleep: .max, awakenings: .max) == 80)
    }

    @Test(arguments: StatisticsRule.allCases)
    func randomItemListsKeepInvariants(rule: StatisticsRule) throws {
        var generator = SeededGenerator(state: 0x5EED_0000 + UInt64(rule.rawValue))
        let base = at("2026-03-20 12:00")
        for _ in 0..<1_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let items = (0..<count).map { _ in
                SleepItem(
                    stage: SleepStage(rawValue: UInt8.random(in: 0...3, using: &generator)) ?? .light,
                    start: base + Int64.random(in: -3_600...(16 * 86_400), using: &generator),
                    duration: Int64.random(in: -600...(Bool.random(using: &generator) ? 7_200 : 100_000), using: &generator))
            }
            let (days, report) = SleepProcessor.analyse(items, rule: rule, timeZone: Zone.berlin)
            #expect(report.kept + report.dropped == report.received)
            #expect(days.map(\.date) == days.map(\.date).sorted() && Set(days.map(\.date)).count == days.count)
            #expect(days.reduce(0) { $0 + $1.rawItems.count } == report.kept)
            for model in days {
                try checkInvariants(model)
            }
        }
    }

    private func checkInvariants(_ model: DailySleepModel) throws {
        let segments = model.nightSleeps + model.daytimeSleeps
        for summary in segments.map(\.summary) + [model.dailySummary] {
            let shares = [summary.awakePercentage, summary.lightSleepPercentage, summary.deepSleepPercentage, summary.remPercentage].map(Int.init)
            #expect(shares.reduce(0, +) <= 100)
            #expect(summary.qualityScore <= 100)
            #expect(summary.totalSleepDuration == summary.lightSleepDuration + summary.deepSleepDuration + summary.remDuration)
            #expect(summary.start <= summary.end && summary.duration >= summary.totalSleepDuration)
        }
        for segment in segments {
            let items = segment.detailItems
            #expect(items.last.map { $0.stage != .awake } == true, "no trailing awake item")
            #expect(zip(items, items.dropFirst()).allSatisfy { $0.end <= $1.start })
            #expect(zip(items, items.dropFirst()).allSatisfy { pair in
                pair.1.stage == .awake || items.prefix(while: { $0 != pair.1 }).last(where: { $0.stage != .awake }).map { pair.1.start - $0.end < 1_800 } ?? true
            }, "no 30 min break inside a segment")
            #expect(segment.epochs.stages.count == Int((segment.summary.duration + 29) / 30))
            #expect(segment.metrics.sleepEfficiency >= 0 && segment.metrics.sleepEfficiency <= 1)
        }
        #expect(Set(model.validNaps).isSubset(of: Set(model.daytimeSleeps)))
        #expect(model.validNaps.allSatisfy { $0.summary.duration > 1_200 && $0.summary.duration <= 10_800 })
        if model.statisticsRule == .withoutNap || model.statisticsRule == .longestOnly { #expect(model.validNaps.isEmpty) }
        if model.statisticsRule == .longestOnly || model.statisticsRule == .longestNight { #expect(model.nightSleeps.count <= 1) }
        let windows = LocalDayClock(timeZone: Zone.berlin).windows(for: model.date)
        #expect(model.rawItems.allSatisfy { $0.start >= windows.eveningBefore && $0.start < windows.evening })
    }

    @Test func modelsRoundTripThroughJSON() throws {
        let days = SleepProcessor.process(GoldenNightTests.fourRuleDay, rule: .withNap, timeZone: Zone.berlin)
        let data = try JSONEncoder().encode(days)
        #expect(try JSONDecoder().decode([DailySleepModel].self, from: data) == days)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let first = try #require(object.first)
        #expect(Set(first.keys) == ["date", "belongingDate", "statisticsRule", "dailySummary", "metrics", "rawItems", "nightSleeps", "daytimeSleeps", "validNaps"])
        #expect(first["date"] as? String == "2026-01-15")
        #expect(first["statisticsRule"] as? Int == 1)
        let night = try #require((first["nightSleeps"] as? [[String: Any]])?.first)
        #expect(Set(night.keys) == ["periodType", "summary", "metrics", "detailItems", "epochs"])
        #expect(night["periodType"] as? String == "night")
        let summary = try #require(night["summary"] as? [String: Any])
        #expect(summary.count == 17 && summary["qualityScore"] != nil && summary["remCount"] != nil)
    }
}
