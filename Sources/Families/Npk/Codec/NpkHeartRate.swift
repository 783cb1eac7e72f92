import Foundation
import TSModels

/// One day of heart rate from the watch as samples.
public struct NpkHeartRateDaySamples: Sendable, Hashable {
    /// By time, then by value.
    public var samples: [HeartRateSample]
    /// Manual readings outside 1…255 bpm, not taken.
    public var rejectedManualReadings: Int
}

public enum NpkHeartRate {
    /// Seconds between two bytes of `autoData`.
    public static let autoInterval: Int64 = 300

    /// The watch's readings every 5 minutes from the day's start (a 0 byte: no reading) and its
    /// manual measurements. The day's resting and maximum/minimum values repeat readings and are
    /// not samples. `time` is when the watch measured.
    public static func samples(from day: TSMetaHeartRateDay) -> NpkHeartRateDaySamples {
        var samples: [HeartRateSample] = []
        let start = NpkTime.unix(fromT2000: day.startTimestamp)
        for (slot, bpm) in day.autoData.enumerated() where bpm != 0 {
            samples.append(HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(start + Int64(slot) * autoInterval)), bpm: Int(bpm)))
        }
        var rejected = 0
        for reading in day.manualData {
            if (1...255).contains(reading.value) {
                samples.append(HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(NpkTime.unix(fromT2000: reading.timestamp))),
                                               bpm: Int(reading.value)))
            } else {
                rejected += 1
            }
        }
        samples.sort { ($0.time, $0.bpm) < ($1.time, $1.bpm) }
        return NpkHeartRateDaySamples(samples: samples, rejectedManualReadings: rejected)
    }
}
