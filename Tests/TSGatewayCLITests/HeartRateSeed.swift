import Foundation
import TSModels
import TSStore

/// Databases holding heart-rate samples as `tsgateway serve` stores them, written through
/// `GatewayStore` by the test itself.
enum HeartRateSeed {
    static let watch = WatchID("AA:BB:CC:DD:EE:FF")!
    /// The night the help examples name: 2026-11-20 22:00 to 2026-11-21 07:00 in Berlin.
    static let nightStart = Date(timeIntervalSince1970: 1_795_208_400)
    static let nightEnd = Date(timeIntervalSince1970: 1_795_240_800)

    /// A sample a minute through the night the examples name and through the 11 hours before
    /// `now`, for `watch`; bpm 50…69, every third with sensor contact and an RR interval.
    static func storeExampleSamples(at path: String, now: Date = Date()) async throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let store = try GatewayStore(path: path)
        var samples: [HeartRateSample] = []
        for (first, last) in [(nightStart, nightEnd), (now.addingTimeInterval(-11 * 3600), now)] {
            var time = first, index = 0
            while time < last {
                samples.append(index % 3 == 0
                    ? HeartRateSample(time: time, bpm: 50 + index % 20, sensorContact: .detected, rrIntervals: [1024 * 60 / (50 + index % 20)])
                    : HeartRateSample(time: time, bpm: 50 + index % 20))
                time += 60
                index += 1
            }
        }
        try await store.storeHeartRate(samples, watch: watch)
    }
}
