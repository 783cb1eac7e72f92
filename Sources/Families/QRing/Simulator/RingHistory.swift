import Foundation
import TSModels
import TSQRing

/// One night a simulated ring holds: what the wearer slept (the ground truth) and how the ring
/// reports it (wall-clock minutes and (stage, minutes) pairs).
public struct SimulatedRingNight: Sendable, Hashable {
    /// Unix time the night began.
    public var start: Int64
    /// (ring stage code 0…5, minutes) in order; code 0 is a stretch the ring has no data for.
    public var pairs: [(code: UInt8, minutes: Int)]

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.start == rhs.start && lhs.pairs.map(\.code) == rhs.pairs.map(\.code) && lhs.pairs.map(\.minutes) == rhs.pairs.map(\.minutes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(start)
        hasher.combine(pairs.map(\.code))
        hasher.combine(pairs.map(\.minutes))
    }

    public var end: Int64 { start + Int64(pairs.reduce(0) { $0 + $1.minutes } * 60) }

    /// The sleep records a gateway must store for this night: every stretch with data.
    public var items: [SleepItem] {
        var time = start, items: [SleepItem] = []
        for pair in pairs {
            let stage: SleepStage? = switch pair.code {
            case 2: .light
            case 3: .deep
            case 4: .rem
            case 5: .awake
            default: nil
            }
            if let stage, pair.minutes > 0 { items.append(SleepItem(stage: stage, start: time, duration: Int64(pair.minutes * 60))) }
            time += Int64(pair.minutes * 60)
        }
        return items
    }
}

/// A simulated ring's history, made deterministically from a seed: nights of sleep and a
/// heart-rate reading every five minutes, in a named zone, up to `now`.
public struct RingHistory: Sendable {
    public let timeZone: TimeZone
    public let now: Date
    public let nights: [SimulatedRingNight]
    /// The first day (on the ring's clock) the heart-rate log has readings for.
    public let firstLogDay: RingDate
    private let seed: UInt64

    public init(seed: UInt64, timeZone: TimeZone, now: Date, days: Int) {
        self.seed = seed
        self.timeZone = timeZone
        self.now = now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var random = SeededRandom(seed: seed)
        var nights: [SimulatedRingNight] = []
        let today = calendar.startOfDay(for: now)
        for back in stride(from: days, through: 0, by: -1) {
            guard let morning = calendar.date(byAdding: .day, value: -back, to: today),
                  let evening = calendar.date(byAdding: .day, value: -1, to: morning) else { continue }
            // Bed between 21:30 and 00:30 of the evening before.
            let bedMinutes = 21 * 60 + 30 + random.int(0...180)
            guard let bed = calendar.date(byAdding: .minute, value: bedMinutes, to: evening) else { continue }
            var pairs: [(code: UInt8, minutes: Int)] = []
            var total = 0
            let length = random.int(360...510)
            while total < length {
                let code: UInt8 = random.chance(0.04) ? 0 : [2, 2, 2, 3, 3, 4, 4, 5][random.int(0...7)]
                let minutes = min(code == 5 ? random.int(2...15) : random.int(5...80), length - total)
                if let last = pairs.last, last.code == code, last.minutes + minutes <= 255 {
                    pairs[pairs.count - 1].minutes += minutes
                } else {
                    pairs.append((code, minutes))
                }
                total += minutes
            }
            let night = SimulatedRingNight(start: Int64(bed.timeIntervalSince1970), pairs: pairs)
            // The ring holds a night once it has ended.
            if night.end <= Int64(now.timeIntervalSince1970) { nights.append(night) }
        }
        self.nights = nights
        firstLogDay = RingDateTime(calendar.date(byAdding: .day, value: -days, to: today) ?? today, in: timeZone).date
    }

    /// The ring's today.
    public var today: RingDate { RingDateTime(now, in: timeZone).date }

    /// The night that ended on `date` (the ring's clock), if the ring holds one.
    public func night(endingOn date: RingDate) -> SimulatedRingNight? {
        nights.first { RingDateTime(Date(timeIntervalSince1970: TimeInterval($0.end)), in: timeZone).date == date }
    }

    /// The reading of each five-minute slot of `day` (0…287): nil where the ring has none
    /// (before its history, after now, or a slot the interval skips).
    public func heartRate(day: RingDate, intervalMinutes: Int, enabled: Bool) -> [Int?] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let every = max(1, intervalMinutes / 5)
        return (0..<288).map { slot -> Int? in
            guard enabled, day >= firstLogDay, slot % every == 0,
                  let time = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: slot / 12, minute: slot % 12 * 5)),
                  time <= now else { return nil }
            var random = SeededRandom(seed: seed ^ UInt64(bitPattern: day.daysSince1970 * 288 + Int64(slot)))
            let asleep = nights.contains { $0.start <= Int64(time.timeIntervalSince1970) && Int64(time.timeIntervalSince1970) < $0.end }
            return (asleep ? 52 : 68) + random.int(0...18)
        }
    }

    /// The heart-rate samples a gateway must store for `day`, each at the instant its slot began.
    public func heartRateSamples(day: RingDate, intervalMinutes: Int, enabled: Bool) -> [HeartRateSample] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return heartRate(day: day, intervalMinutes: intervalMinutes, enabled: enabled).enumerated().compactMap { slot, bpm in
            guard let bpm, let time = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: slot / 12, minute: slot % 12 * 5))
            else { return nil }
            return HeartRateSample(time: time, bpm: bpm)
        }
    }

    /// The quarter-hours of `day` with steps, up to now: what a steps answer (0x43) carries.
    public func steps(day: RingDate) -> [SimulatedSteps] {
        guard day >= firstLogDay else { return [] }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var random = SeededRandom(seed: seed ^ 0x5354_4550 ^ UInt64(bitPattern: day.daysSince1970))
        return (28...87).compactMap { quarter -> SimulatedSteps? in
            let active = random.chance(0.6), steps = random.int(50...1500)
            guard active, let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: quarter / 4, minute: quarter % 4 * 15)),
                  start <= now else { return nil }
            return SimulatedSteps(quarter: quarter, steps: steps, calories: steps / 250 * 10, distanceMeters: steps * 7 / 10)
        }
    }
}

/// One quarter-hour of a simulated ring's steps.
public struct SimulatedSteps: Sendable, Hashable {
    /// 0…95 from the day's midnight on the ring's clock.
    public var quarter: Int
    public var steps: Int
    /// A multiple of 10: the ring counts calories in tens (its steps header says so).
    public var calories: Int
    public var distanceMeters: Int

    public init(quarter: Int, steps: Int, calories: Int, distanceMeters: Int) {
        self.quarter = quarter
        self.steps = steps
        self.calories = calories
        self.distanceMeters = distanceMeters
    }
}
