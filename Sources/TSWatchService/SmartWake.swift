import Foundation
import TSModels

/// Smart wake from the gateway, for a watch that cannot do it itself: inside an alarm's smart
/// window (the minutes before its time) the gateway makes the watch ring at the first light or
/// awake stage; otherwise the watch's own alarm rings at its time. The watch's alarm is never
/// disabled, so a lost link or a dead gateway still wakes the person at the set time.
///
/// Pure: what to do is decided from the alarm table, the windows, the time and the last stage
/// the watch reported; the caller rings, records and announces. `SmartWakeTests` script nights
/// against it.
public struct SmartWake: Sendable {
    /// One ringing of one alarm: its slot and the moment it is set to ring.
    public struct Occurrence: Sendable, Hashable, Codable, CustomStringConvertible {
        public var slot: Int
        public var time: Date
        public init(slot: Int, time: Date) {
            self.slot = slot
            self.time = time
        }
        public var description: String { "alarm \(slot) at \(ISO8601DateFormatter().string(from: time))" }
    }

    /// What the gateway does about an occurrence.
    public enum Decision: Sendable, Hashable {
        /// The smart window of `occurrence` has begun (announce it once).
        case windowStarted(Occurrence, windowStart: Date)
        /// Ring now: the watch reported `stage` inside the window.
        case ring(Occurrence, stage: SleepStage)
        /// The window ended at the alarm time without a light or awake stage: the watch's own
        /// alarm rings (announce it once).
        case leftToWatch(Occurrence)
    }

    /// Smart window minutes by alarm slot; a slot not listed (or 0) has none.
    public var windows: [Int: Int]
    public var timeZone: TimeZone

    public init(windows: [Int: Int], timeZone: TimeZone) {
        self.windows = windows.filter { $0.value > 0 }
        self.timeZone = timeZone
    }

    /// The occurrences whose window contains `now` ([time - window, time)), and the ones whose
    /// time passed less than `grace` ago (for `leftToWatch`).
    public func occurrences(around now: Date, alarms: [Alarm], grace: TimeInterval = 120) -> [(occurrence: Occurrence, windowStart: Date)] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var found: [(Occurrence, Date)] = []
        for alarm in alarms where alarm.isEnabled {
            guard let minutes = windows[Int(alarm.slot)] else { continue }
            // Today's and tomorrow's time: a window may start before midnight.
            for offset in -1...1 {
                guard let day = calendar.date(byAdding: .day, value: offset, to: calendar.startOfDay(for: now)),
                      let time = calendar.date(bySettingHour: Int(alarm.hour), minute: Int(alarm.minute), second: 0, of: day) else { continue }
                guard alarm.repeatDays.allows(time, in: calendar) else { continue }
                let start = time - TimeInterval(minutes * 60)
                if now >= start && now < time + grace { found.append((Occurrence(slot: Int(alarm.slot), time: time), start)) }
            }
        }
        return found.sorted { ($0.0.time, $0.0.slot) < ($1.0.time, $1.0.slot) }
    }

    /// What to do at `now` with the last stage the watch reported (nil: no live session, so
    /// nothing to decide on). `settled`: occurrences already rung or left to the watch (kept by
    /// the caller across restarts, so that nothing rings twice); `announced`: windows already
    /// announced.
    public func decide(now: Date, stage: SleepStage?, alarms: [Alarm], settled: Set<Occurrence>, announced: Set<Occurrence>) -> [Decision] {
        var decisions: [Decision] = []
        for (occurrence, start) in occurrences(around: now, alarms: alarms) where !settled.contains(occurrence) {
            if now >= occurrence.time {
                decisions.append(.leftToWatch(occurrence))
                continue
            }
            if !announced.contains(occurrence) { decisions.append(.windowStarted(occurrence, windowStart: start)) }
            if let stage, stage == .light || stage == .awake { decisions.append(.ring(occurrence, stage: stage)) }
        }
        return decisions
    }

}
