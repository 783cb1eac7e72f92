import Foundation
import TSModels

/// Deterministic, realistic sleep records: nights of ~90-minute cycles with deep sleep early and
/// REM late, brief awakenings, now and then a long one, bedtimes that vary, naps on some days.
/// Each night depends only on the seed and its date, so any range of days gives the same nights.
public struct SleepDataGenerator: Sendable {
    public var seed: UInt64
    public var timeZone: TimeZone

    public init(seed: UInt64, timeZone: TimeZone) {
        self.seed = seed
        self.timeZone = timeZone
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// Records of the nights that end on the mornings of `days` local dates ending with
    /// `lastMorning` (inclusive), plus that day's nap, sorted by start. Only items that end by
    /// `notAfter` are included (a watch stores finished items only).
    public func records(days: Int, lastMorning: Date, notAfter: Date? = nil) -> [SleepItem] {
        let lastDay = calendar.startOfDay(for: lastMorning)
        var items: [SleepItem] = []
        for offset in stride(from: days - 1, through: 0, by: -1) {
            guard let day = calendar.date(byAdding: .day, value: -offset, to: lastDay) else { continue }
            items += itemsForDay(startingAt: day)
        }
        if let notAfter {
            let limit = Int64(notAfter.timeIntervalSince1970)
            items.removeAll { $0.end > limit }
        }
        return items.sorted { ($0.start, $0.stage) < ($1.start, $1.stage) }
    }

    /// The night ending on the morning of `day` (local midnight) and the nap of that day.
    func itemsForDay(startingAt day: Date) -> [SleepItem] {
        let dayNumber = Int64(day.timeIntervalSince1970 / 86_400)
        var rng = SeededRandom(seed: seed ^ UInt64(bitPattern: dayNumber &* 0x2545_F491_4F6C_DD1D))
        var items: [SleepItem] = []

        // Bedtime between 21:45 and 00:45 on the previous evening, local wall time.
        guard let previousEvening = calendar.date(byAdding: .day, value: -1, to: day),
              let bedtime = calendar.date(bySettingHour: 21, minute: 45, second: 0, of: previousEvening)
        else { return [] }
        var time = Int64(bedtime.timeIntervalSince1970) + Int64(rng.int(0...180)) * 60 + Int64(rng.int(0...59))
        func add(_ stage: SleepStage, minutes: Int) {
            guard minutes > 0 else { return }
            let duration = Int64(minutes) * 60
            items.append(SleepItem(stage: stage, start: time, duration: duration))
            time += duration
        }

        add(.awake, minutes: rng.int(4...18))            // falling asleep
        let cycles = rng.int(4...6)
        let longAwakeningCycle = rng.chance(0.12) ? rng.int(1...cycles - 1) : -1
        for cycle in 0..<cycles {
            let early = cycle < 2
            add(.light, minutes: rng.int(12...28))
            add(.deep, minutes: early ? rng.int(20...45) : rng.int(0...12))
            add(.light, minutes: rng.int(8...20))
            add(.rem, minutes: early ? rng.int(5...12) : rng.int(18...38))
            if cycle == longAwakeningCycle {
                add(.awake, minutes: rng.int(30...55))   // long enough to split the night
            } else if rng.chance(0.35) {
                add(.awake, minutes: rng.int(1...6))
            }
        }
        add(.light, minutes: rng.int(5...20))
        add(.awake, minutes: rng.int(2...10))           // waking up: trailing awake

        if rng.chance(0.35), let napStart = calendar.date(bySettingHour: 13, minute: 0, second: 0, of: day) {
            time = Int64(napStart.timeIntervalSince1970) + Int64(rng.int(0...180)) * 60
            if rng.chance(0.2) {
                add(.light, minutes: rng.int(10...18))   // too short to count as a nap
            } else {
                add(.light, minutes: rng.int(10...25))
                add(.deep, minutes: rng.int(0...20))
                add(.light, minutes: rng.int(5...30))
            }
            add(.awake, minutes: rng.int(0...3))
        }
        return items
    }
}

/// The simulated watch's clock: now, or the instant in TSGATEWAY_SIMULATOR_NOW (ISO 8601),
/// which pins it so that output is reproducible and two simulator runs hold the same records.
public enum SimulatorClock {
    public static func now(environment: [String: String] = ProcessInfo.processInfo.environment) -> Date {
        environment["TSGATEWAY_SIMULATOR_NOW"].flatMap { ISO8601DateFormatter().date(from: $0) } ?? Date()
    }
}
