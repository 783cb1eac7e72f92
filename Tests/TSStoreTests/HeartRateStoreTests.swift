import Foundation
import Testing
import TSModels
import TSStore

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
        #expect(try await store.storeHeartRate(samples, watch: "a") == 3)
        #expect(try await store.storeHeartRate(samples, watch: "a") == 0, "a sample delivered again is not stored twice")
        #expect(try await store.storeHeartRate(Array(samples.prefix(1)), watch: "b") == 1, "another watch has its own samples")
        #expect(try await store.heartRate(watch: "a") == samples)
        #expect(try await store.heartRate(watch: "a", from: base + 1, to: base + 3_600) == [samples[1]], "the range is half open")
        #expect(try await store.pruneHeartRate(before: base + 2) == 3)
        #expect(try await store.heartRate(watch: "a") == [samples[2]])
        #expect(try await store.heartRate(watch: "b").isEmpty)
    }
}

@Suite struct SmartWakeStoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-smartwake-\(UUID())/db.sqlite").path

    @Test func windowsPersistAndARingingIsSettledOnceAcrossReopening() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let time = Date(timeIntervalSince1970: 1_795_413_600)
        do {
            let store = try GatewayStore(path: path)
            try await store.setSmartWakeWindow(watch: "w", slot: 1, minutes: 30)
            try await store.setSmartWakeWindow(watch: "w", slot: 2, minutes: 20)
            try await store.setSmartWakeWindow(watch: "w", slot: 2, minutes: 0)
            #expect(try await store.smartWakeWindows(watch: "w") == [1: 30])
            #expect(try await store.settleSmartWake(watch: "w", slot: 1, alarmTime: time, outcome: .rang, stage: .light))
        }
        let reopened = try GatewayStore(path: path)
        #expect(try await reopened.smartWakeWindows(watch: "w") == [1: 30])
        #expect(try await !reopened.settleSmartWake(watch: "w", slot: 1, alarmTime: time, outcome: .leftToWatch, stage: nil), "settled once, by whoever came first")
        let settled = try await reopened.settledSmartWakes(watch: "w", since: time - 3600)
        #expect(settled.count == 1 && settled[0].slot == 1 && settled[0].alarmTime == time && settled[0].outcome == .rang)
        #expect(try await reopened.settledSmartWakes(watch: "w", since: time + 1).isEmpty)
    }
}
