import Foundation
import TSModels
import TSProtocol

/// The alarm logic of the simulated watch (wire-protocol.md §9.4, §9.5): an alarm rings at its
/// time, or early at the first light or awake stage inside its smart window; RING rings now;
/// the wearer dismisses or snoozes; a ring nobody answers times out. Pure and driven from
/// outside — `advance(to:)` with the instant and the wearer's stage — so tests script a night
/// minute by minute and live runs tick it with the wall clock.
public struct WatchAlarmClock: Sendable {
    /// How long a ring lasts unanswered before the watch stops it (`timedOut`).
    public var ringDuration: Duration
    /// How long a snooze lasts.
    public var snoozeMinutes: UInt8

    /// The instant of the last evaluation: the watch's idea of now.
    public private(set) var now: Date?
    /// Alarms ringing or snoozed now, by slot.
    public private(set) var active: [UInt8: ActiveRing] = [:]
    /// The occurrence each alarm last rang for, so that it rings once per occurrence.
    private var consumed: [UInt8: Date] = [:]
    /// When each alarm last began to ring, test rings left out (RING's alreadyRang).
    private var lastRang: [UInt8: Date] = [:]

    /// The longest a RING smartWake may reach ahead, and how far back alreadyRang looks.
    public static let ringReach: TimeInterval = 255 * 60

    public struct ActiveRing: Sendable, Hashable {
        public var trigger: AlarmAlertTrigger
        public var started: Date
        /// Set while snoozed: when it rings again.
        public var snoozedUntil: Date?
    }

    /// What an evaluation changed: alerts to report, and once-alarms that rang (the watch
    /// switches them off).
    public enum Change: Sendable, Hashable {
        case alert(AlarmAlert)
        case onceAlarmRang(slot: UInt8)
    }

    public init(ringDuration: Duration = .seconds(60), snoozeMinutes: UInt8 = 9) {
        self.ringDuration = ringDuration
        self.snoozeMinutes = max(1, snoozeMinutes)
    }

    /// Moves the clock to `time` with the wearer in `stage` (nil: not worn, no stage known):
    /// ends timed-out rings, rings again after snoozes, then rings the alarms that are due.
    public mutating func advance(to time: Date, stage: SleepStage?, alarms: [Alarm], calendar: Calendar) -> [Change] {
        let previous = now
        // The watch's clock never runs backwards.
        let time = max(time, previous ?? time)
        now = time
        var changes: [Change] = []
        for slot in active.keys.sorted() {
            guard let ring = active[slot] else { continue }
            if let until = ring.snoozedUntil {
                guard time >= until else { continue }
                active[slot] = ActiveRing(trigger: .snoozeEnded, started: time)
                changes.append(.alert(alert(.ringing, slot, .snoozeEnded, time)))
            } else if time.timeIntervalSince(ring.started) >= ringDuration.timeInterval {
                active[slot] = nil
                changes.append(.alert(alert(.timedOut, slot, ring.trigger, time)))
            }
        }
        for alarm in alarms where alarm.isEnabled {
            if let previous, let due = alarm.occurrences(after: previous, through: time, calendar: calendar).last, consumed[alarm.slot] != due {
                changes += start(alarm, .alarmTime, at: time, occurrence: due)
            } else if alarm.smartWindow > 0, let stage, stage == .light || stage == .awake,
                      let next = alarm.nextOccurrence(after: time, calendar: calendar),
                      next.timeIntervalSince(time) <= TimeInterval(alarm.smartWindow) * 60, consumed[alarm.slot] != next {
                changes += start(alarm, .smartWindow, at: time, occurrence: next)
            }
        }
        return changes
    }

    /// RING at the clock's current time (`now`, or `fallback` before the first evaluation).
    /// Returns the result, or the reason for an INVALID_VALUE answer.
    public mutating func ring(slot: UInt8, reason: RingReason, alarms: [Alarm], calendar: Calendar,
                              fallback: Date) -> Result<(RingResult, [Change]), RingRefusal> {
        let time = now ?? fallback
        guard let alarm = alarms.first(where: { $0.slot == slot }) else {
            return .failure(RingRefusal("slot \(slot) holds no alarm"))
        }
        if active[slot] != nil { return .success((.alreadyRinging, [])) }
        switch reason {
        case .test:
            active[slot] = ActiveRing(trigger: .ringTest, started: time)
            return .success((.ringing, [.alert(self.alert(.ringing, slot, .ringTest, time))]))
        case .smartWake:
            if let last = lastRang[slot], time.timeIntervalSince(last) < Self.ringReach { return .success((.alreadyRang, [])) }
            guard alarm.isEnabled else { return .failure(RingRefusal("slot \(slot): the alarm is disabled")) }
            let minuteStart = calendar.dateInterval(of: .minute, for: time)?.start ?? time
            guard let next = alarm.nextOccurrence(after: minuteStart.addingTimeInterval(-1), calendar: calendar) else {
                return .failure(RingRefusal("slot \(slot): the alarm has no next occurrence"))
            }
            let ahead = next.timeIntervalSince(time)
            guard ahead <= Self.ringReach else {
                let clock = AlarmText.formatTime(hour: alarm.hour, minute: alarm.minute)
                return .failure(RingRefusal("slot \(slot): next occurrence \(clock) is \(Int((ahead / 60).rounded(.up))) minutes away, limit 255"))
            }
            return .success((.ringing, start(alarm, .ringSmartWake, at: time, occurrence: next)))
        }
    }

    /// The wearer stops every ring (and snooze) at `time`.
    public mutating func dismiss(at time: Date) -> [AlarmAlert] {
        let ended = active.sorted { $0.key < $1.key }
        active = [:]
        return ended.map { alert(.dismissed, $0.key, $0.value.trigger, max(time, now ?? time)) }
    }

    /// The wearer snoozes every ring whose alarm allows it at `time`; rings of alarms that do not
    /// offer snooze go on.
    public mutating func snooze(at time: Date, alarms: [Alarm]) -> [AlarmAlert] {
        let time = max(time, now ?? time)
        var alerts: [AlarmAlert] = []
        for (slot, ring) in active.sorted(by: { $0.key < $1.key }) where ring.snoozedUntil == nil {
            guard alarms.first(where: { $0.slot == slot })?.snoozeAllowed == true else { continue }
            active[slot]?.snoozedUntil = time.addingTimeInterval(TimeInterval(snoozeMinutes) * 60)
            alerts.append(AlarmAlert(kind: .snoozed, slot: slot, trigger: ring.trigger, time: Self.seconds(time), snoozeMinutes: snoozeMinutes))
        }
        return alerts
    }

    private mutating func start(_ alarm: Alarm, _ trigger: AlarmAlertTrigger, at time: Date, occurrence: Date) -> [Change] {
        consumed[alarm.slot] = occurrence
        // Already ringing (a snooze running into its next occurrence): that ring stands for it.
        guard active[alarm.slot] == nil else { return [] }
        active[alarm.slot] = ActiveRing(trigger: trigger, started: time)
        lastRang[alarm.slot] = time
        var changes: [Change] = [.alert(alert(.ringing, alarm.slot, trigger, time))]
        if alarm.repeatDays == .once { changes.append(.onceAlarmRang(slot: alarm.slot)) }
        return changes
    }

    private func alert(_ kind: AlarmAlertKind, _ slot: UInt8, _ trigger: AlarmAlertTrigger, _ time: Date) -> AlarmAlert {
        AlarmAlert(kind: kind, slot: slot, trigger: trigger, time: Self.seconds(time))
    }

    static func seconds(_ date: Date) -> UInt32 { UInt32(clamping: Int64(date.timeIntervalSince1970.rounded(.down))) }
}

/// Why the watch refuses a RING (answered INVALID_VALUE with this message).
public struct RingRefusal: Error, Sendable, Hashable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

extension Alarm {
    /// The instants the alarm is set for in (`after`, `through`], in `calendar`'s time zone:
    /// its hour and minute on each day its repeat allows (every day for a once-alarm).
    public func occurrences(after: Date, through: Date, calendar: Calendar) -> [Date] {
        guard through > after else { return [] }
        var found: [Date] = []
        var day = calendar.startOfDay(for: after)
        let lastDay = calendar.startOfDay(for: through)
        while day <= lastDay {
            if let instant = occurrence(on: day, calendar: calendar), instant > after, instant <= through { found.append(instant) }
            guard let following = calendar.date(byAdding: .day, value: 1, to: day) else { break }
            day = following
        }
        return found
    }

    /// The first instant strictly after `after` the alarm is set for; nil for a repeat mask
    /// without days that still is not `.once` (cannot happen for valid masks).
    public func nextOccurrence(after: Date, calendar: Calendar) -> Date? {
        var day = calendar.startOfDay(for: after)
        for _ in 0..<9 {
            if let instant = occurrence(on: day, calendar: calendar), instant > after { return instant }
            guard let following = calendar.date(byAdding: .day, value: 1, to: day) else { return nil }
            day = following
        }
        return nil
    }

    private func occurrence(on day: Date, calendar: Calendar) -> Date? {
        guard repeatDays.allows(day, in: calendar) else { return nil }
        return calendar.date(bySettingHour: Int(hour), minute: Int(minute), second: 0, of: day)
    }
}

