import Foundation
import Testing
import TSModels
import TSStore

private let otherWatch = WatchID("00:00:5E:00:53:0E")!
private let watchA = WatchID("00:00:5E:00:53:0A")!
private let watchB = WatchID("00:00:5E:00:53:0B")!
private let watchW = WatchID("00:00:5E:00:53:77")!

@Suite struct HeartRateStoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-hr-\(UUID())/db.sqlite").path

    @Test func samplesRoundTripAreKeptOncePerWatchAndMillisecondAndArePrunedByAge() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let base = Date(timeIntervalSince1970: 1_762_150_000.25)
        let samples = [
            HeartRateSample(time: base, bpm: 58, sensorContact: .detected, energyExpended: 12, rrIntervals: [1030, 1011]),
            HeartRateSample(time: base + 1, bpm: 61),
            HeartRateSample(time: base + 3_600, bpm: 250, sensorContact: .notDetected),
        ]
        #expect(try await store.storeHeartRate(samples, watch: watchA) == 3)
        #expect(try await store.storeHeartRate(samples, watch: watchA) == 0, "a sample delivered again is not stored twice")
        #expect(try await store.storeHeartRate(Array(samples.prefix(1)), watch: watchB) == 1, "another watch has its own samples")
        #expect(try await store.heartRate(watch: watchA) == samples)
        #expect(try await store.heartRate(watch: watchA, from: base + 1, to: base + 3_600) == [samples[1]], "the range is half open")
        #expect(try await store.pruneHeartRate(before: base + 2) == 3)
        #expect(try await store.heartRate(watch: watchA) == [samples[2]])
        #expect(try await store.heartRate(watch: watchB).isEmpty)
    }

    @Test func summariesCoverTheSamplesReceivedInEachHalfOpenSpanOfOneWatch() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let night: Range<Int64> = 1_762_120_800..<1_762_146_000
        let nap: Range<Int64> = 1_762_174_800..<1_762_177_500
        let empty: Range<Int64> = 1_762_200_000..<1_762_203_600
        func at(_ seconds: Int64, _ bpm: Int, plus milliseconds: Double = 0) -> HeartRateSample {
            HeartRateSample(time: Date(timeIntervalSince1970: Double(seconds) + milliseconds / 1000), bpm: bpm)
        }
        let inside = [at(night.lowerBound, 55), at(night.lowerBound + 3_600, 48), at(night.lowerBound + 7_200, 71),
                      at(night.upperBound - 1, 60, plus: 999)]
        let outside = [at(night.lowerBound - 1, 99, plus: 999), at(night.upperBound, 30), at(night.upperBound + 600, 120)]
        let napSamples = [at(nap.lowerBound + 60, 64), at(nap.lowerBound + 120, 65)]
        try await store.storeHeartRate(inside + outside + napSamples, watch: watchA)
        try await store.storeHeartRate([at(night.lowerBound + 10, 200), at(empty.lowerBound + 10, 200)], watch: watchB)

        let summaries = try await store.heartRateSummaries(watch: watchA, spans: [night, nap, empty, night, 5..<5])
        #expect(summaries.count == 2, "a span without samples (or an empty span) has no entry")
        #expect(summaries[night] == HeartRateSummary(minimum: 48, average: 58.5, maximum: 71, samples: 4),
                "the first millisecond counts, the end and the millisecond before the start do not, another watch's samples do not")
        #expect(summaries[night] == HeartRateSummary(inside), "the same summary as over the samples themselves")
        #expect(summaries[nap] == HeartRateSummary(minimum: 64, average: 64.5, maximum: 65, samples: 2))
        #expect(summaries[empty] == nil)
        #expect(try await store.heartRateSummaries(watch: watchA, spans: []).isEmpty)
    }

    @Test func summariesOfMoreSpansThanOneQueryTakesAreAllThere() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let base: Int64 = 1_762_000_000
        let spans = (0..<1_200).map { Int64($0) * 100 + base ..< Int64($0) * 100 + base + 50 }
        let samples = spans.map { HeartRateSample(time: Date(timeIntervalSince1970: Double($0.lowerBound + 10)), bpm: 40 + Int(($0.lowerBound - base) / 100) % 100) }
        try await store.storeHeartRate(samples, watch: watchA)
        let summaries = try await store.heartRateSummaries(watch: watchA, spans: spans)
        #expect(summaries.count == spans.count)
        for (span, sample) in zip(spans, samples) where summaries[span] != HeartRateSummary(minimum: sample.bpm, average: Double(sample.bpm), maximum: sample.bpm, samples: 1) {
            Issue.record("span \(span): \(String(describing: summaries[span])), expected the one sample of \(sample.bpm) bpm")
        }
    }
}

@Suite struct SmartWakeStoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-smartwake-\(UUID())/db.sqlite").path

    @Test func windowsPersistAndARingingIsSettledOnceAcrossReopening() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let time = Date(timeIntervalSince1970: 1_795_413_600)
        do {
            let store = try GatewayStore(path: path)
            try await store.setSmartWakeWindow(watch: watchW, slot: 1, minutes: 30)
            try await store.setSmartWakeWindow(watch: watchW, slot: 2, minutes: 20)
            try await store.setSmartWakeWindow(watch: watchW, slot: 2, minutes: 0)
            #expect(try await store.smartWakeWindows(watch: watchW) == [1: 30])
            #expect(try await store.settleSmartWake(watch: watchW, slot: 1, alarmTime: time, outcome: .rang, stage: .light))
        }
        let reopened = try GatewayStore(path: path)
        #expect(try await reopened.smartWakeWindows(watch: watchW) == [1: 30])
        #expect(try await !reopened.settleSmartWake(watch: watchW, slot: 1, alarmTime: time, outcome: .leftToWatch, stage: nil), "settled once, by whoever came first")
        let settled = try await reopened.settledSmartWakes(watch: watchW, since: time - 3600)
        #expect(settled.count == 1 && settled[0].slot == 1 && settled[0].alarmTime == time && settled[0].outcome == .rang)
        #expect(try await reopened.settledSmartWakes(watch: watchW, since: time + 1).isEmpty)
    }

    @Test func theConfiguredSetReplacesTheWatchsWindowsOnly() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        try await store.setSmartWakeWindow(watch: watchW, slot: 1, minutes: 30)
        try await store.setSmartWakeWindow(watch: watchW, slot: 4, minutes: 10)
        try await store.setSmartWakeWindow(watch: otherWatch, slot: 1, minutes: 15)
        try await store.replaceSmartWakeWindows(watch: watchW, with: [1: 20, 2: 45, 3: 0])
        #expect(try await store.smartWakeWindows(watch: watchW) == [1: 20, 2: 45])
        #expect(try await store.smartWakeWindows(watch: otherWatch) == [1: 15])
        try await store.replaceSmartWakeWindows(watch: watchW, with: [:])
        #expect(try await store.smartWakeWindows(watch: watchW).isEmpty)
    }
}
