import Foundation
import TSModels

/// Deterministic heart rate as a watch measures it on its own: a reading every 5 minutes on the
/// clock's 5-minute marks (none now and then, the watch off the wrist), lower in deep sleep than
/// in light sleep, REM or awake, and two manual measurements a day between the marks. Each
/// reading depends only on the seed, its time and the sleep records, so any range gives the same
/// readings.
public struct HeartRateHistoryGenerator: Sendable {
    public static let interval: Int64 = 300
    public var seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    /// The readings with time in [start, end), sorted by time; `records` say how the wearer slept.
    public func samples(start: Int64, end: Int64, records: [SleepItem]) -> [HeartRateSample] {
        guard start < end else { return [] }
        let sleep = records.sorted { $0.start < $1.start }
        var next = sleep.startIndex
        func stage(at time: Int64) -> SleepStage? {
            while next < sleep.endIndex, sleep[next].end <= time { next += 1 }
            guard next < sleep.endIndex, sleep[next].start <= time else { return nil }
            return sleep[next].stage
        }
        var samples: [HeartRateSample] = []
        var mark = (start + Self.interval - 1).floorDivided(by: Self.interval) * Self.interval
        while mark < end {
            var rng = SeededRandom(seed: seed ^ UInt64(bitPattern: mark &* 0x2545_F491_4F6C_DD1D))
            if !rng.chance(0.03) {
                let bpm = switch stage(at: mark) {
                case .deep: rng.int(47...54)
                case .light: rng.int(52...60)
                case .rem: rng.int(57...66)
                case .awake: rng.int(60...72)
                case nil: rng.int(64...96)
                }
                samples.append(HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(mark)), bpm: bpm))
            }
            mark += Self.interval
        }
        // Manual measurements: at 10:00 and 17:00 UTC plus up to an hour, never on a mark.
        let firstDay = start.floorDivided(by: 86_400), lastDay = (end - 1).floorDivided(by: 86_400)
        for day in firstDay...lastDay {
            var rng = SeededRandom(seed: seed ^ 0x6D61_6E75_616C ^ UInt64(bitPattern: day &* 0x9E37_79B9))
            for hour: Int64 in [10, 17] {
                let time = day * 86_400 + hour * 3600 + Int64(rng.int(0...11)) * Self.interval + Int64(rng.int(1...299))
                let bpm = rng.int(68...118)
                if (start..<end).contains(time) {
                    samples.append(HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(time)), bpm: bpm))
                }
            }
        }
        return samples.sorted { $0.time < $1.time }
    }
}

private extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
