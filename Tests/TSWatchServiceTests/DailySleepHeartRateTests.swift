import Foundation
import TSModels
import TSSimulatedHistory
import TSSimulator
import TSSleep
import TSStore
import TSWatchService
import Testing

private let otherWatch = WatchID("00:00:5E:00:53:0E")!

/// The store's daily reports put on each segment the heart rate of the samples stored during it.
@Suite("heart rate in the daily reports")
struct DailySleepHeartRateTests {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    static let watch = WatchID("AA:BB:CC:DD:EE:01")!

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-dailyhr-\(UUID().uuidString.prefix(8))")

    /// A store with five generated days of records (with naps) and the report of their dates without any samples.
    func storeWithNights() async throws -> (GatewayStore, first: LocalDate, last: LocalDate, plain: DailySleepReport) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        let records = SleepDataGenerator(seed: 11, timeZone: Self.zone).records(days: 5, lastMorning: Self.now, notAfter: Self.now)
        try await store.storeSleepRecords(records, watch: Self.watch, cursor: nil)
        let first = LocalDate(year: 2025, month: 10, day: 30), last = LocalDate(year: 2025, month: 11, day: 3)
        let plain = try await store.dailySleepReport(watch: Self.watch, first: first, last: last, timeZone: Self.zone, rule: .withNap)
        return (store, first, last, plain)
    }

    static func sample(_ seconds: Int64, _ bpm: Int, milliseconds: Double = 0) -> HeartRateSample {
        HeartRateSample(time: Date(timeIntervalSince1970: Double(seconds) + milliseconds / 1000), bpm: bpm, sensorContact: .detected)
    }

    @Test("each segment gets the samples received in its [start, end); one without samples has none")
    func segmentsCarryTheirSamples() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, first, last, plain) = try await storeWithNights()
        let nights = plain.days.flatMap(\.nightSleeps)
        let naps = plain.days.flatMap(\.validNaps)
        #expect(nights.count >= 4 && !naps.isEmpty, "the generated days have nights and naps")
        #expect(plain.days.allSatisfy { day in (day.nightSleeps + day.daytimeSleeps + day.validNaps).allSatisfy { $0.heartRate == nil } },
                "no samples stored: no heart rate anywhere")

        // The first night: a sample on its first second, some inside, one in its last millisecond;
        // one a millisecond before it and one on its end second, which belong to no segment.
        let night = nights[0].summary
        let during = [Self.sample(night.start, 58), Self.sample(night.start + 1_800, 49), Self.sample(night.start + 9_000, 66),
                      Self.sample(night.end - 1, 61, milliseconds: 999)]
        let around = [Self.sample(night.start - 1, 140, milliseconds: 999), Self.sample(night.end, 30)]
        let nap = naps[0].summary
        let duringNap = [Self.sample(nap.start + 60, 70), Self.sample(nap.start + 120, 72)]
        try await store.storeHeartRate(during + around + duringNap, watch: Self.watch)
        try await store.storeHeartRate([Self.sample(nights[1].summary.start + 60, 90)], watch: otherWatch)

        let report = try await store.dailySleepReport(watch: Self.watch, first: first, last: last, timeZone: Self.zone, rule: .withNap)
        let summarised = report.days.flatMap(\.nightSleeps)
        #expect(summarised.map(\.summary) == nights.map(\.summary), "the segments themselves do not change")
        #expect(summarised[0].heartRate == HeartRateSummary(minimum: 49, average: 58.5, maximum: 66, samples: 4))
        #expect(summarised.dropFirst().allSatisfy { $0.heartRate == nil }, "nights without samples of this watch have none")
        let napDay = try #require(report.days.first { $0.validNaps.contains { $0.summary == nap } })
        let expectedNap = HeartRateSummary(minimum: 70, average: 71, maximum: 72, samples: 2)
        #expect(napDay.validNaps.first { $0.summary == nap }?.heartRate == expectedNap)
        #expect(napDay.daytimeSleeps.first { $0.summary == nap }?.heartRate == expectedNap, "a nap and its daytime segment agree")

        // JSON: the key is there with the summary, and absent where there is none.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any]
        let days = try #require(json?["days"] as? [[String: Any]])
        let segments = days.flatMap { ($0["nightSleeps"] as? [[String: Any]]) ?? [] }
        #expect(segments.count == summarised.count)
        let heartRate = try #require(segments.first?["heartRate"] as? [String: Any])
        #expect(heartRate["minimum"] as? Int == 49 && heartRate["maximum"] as? Int == 66 && heartRate["average"] as? Double == 58.5
                && heartRate["samples"] as? Int == 4)
        #expect(segments.dropFirst().allSatisfy { $0["heartRate"] == nil })
    }
}
