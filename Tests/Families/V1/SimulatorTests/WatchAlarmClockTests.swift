import Foundation
import Testing
import TSModels
import TSProtocol
import TSSimulator

/// The simulated watch's alarm logic on scripted nights: stages at known minutes, the clock
/// advanced minute by minute, alerts checked by the minute they came at.
@Suite struct WatchAlarmClockTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
    /// Monday 2025-11-03 07:00 UTC.
    static let mondaySeven = Date(timeIntervalSince1970: 1_762_153_200)

    static func at(_ minute: Int, from base: Date = mondaySeven) -> Date { base.addingTimeInterval(TimeInterval(minute * 60)) }

    struct Heard: Equatable, CustomStringConvertible {
        var minute: Int
        var kind: AlarmAlertKind
        var trigger: AlarmAlertTrigger
        var description: String { "\(kind.rawValue)/\(trigger.rawValue)@\(minute)" }
    }

    /// Advances a fresh clock every minute from `from` to `to` (relative to `base`) with the stage
    /// the script gives for that minute (the last entry at or before it); the alerts by minute.
    static func play(_ alarms: [Alarm], script: [(minute: Int, stage: SleepStage?)], from: Int = -60, to: Int = 5,
                     base: Date = mondaySeven, calendar: Calendar = utc) -> (heard: [Heard], changes: [WatchAlarmClock.Change]) {
        var clock = WatchAlarmClock(ringDuration: .seconds(60), snoozeMinutes: 9)
        var heard: [Heard] = []
        var changes: [WatchAlarmClock.Change] = []
        for minute in from...to {
            let stage = script.last { $0.minute <= minute }?.stage
            let now = clock.advance(to: at(minute, from: base), stage: stage, alarms: alarms, calendar: calendar)
            changes += now
            for case let .alert(alert) in now {
                #expect(alert.time == UInt32(at(minute, from: base).timeIntervalSince1970), "an alert carries the minute it came at")
                heard.append(Heard(minute: minute, kind: alert.kind, trigger: alert.trigger))
            }
        }
        return (heard, changes)
    }

    static let workdaysSmart30 = Alarm(slot: 0, label: "Work", hour: 7, minute: 0, snoozeAllowed: true, repeatDays: .workdays, smartWindow: 30)

    @Test("light sleep at minute 18 of a 30-minute window: it rings then, and not again at 07:00")
    func lightSleepInsideTheWindowRingsAtThatMinute() {
        let (heard, _) = Self.play([Self.workdaysSmart30], script: [(-60, .deep), (-12, .light), (-2, .deep)])
        #expect(heard == [Heard(minute: -12, kind: .ringing, trigger: .smartWindow), Heard(minute: -11, kind: .timedOut, trigger: .smartWindow)])
    }

    @Test("deep sleep throughout the window: it rings at the alarm time")
    func deepSleepThroughoutRingsAtTheAlarmTime() {
        let (heard, _) = Self.play([Self.workdaysSmart30], script: [(-60, .deep)])
        #expect(heard == [Heard(minute: 0, kind: .ringing, trigger: .alarmTime), Heard(minute: 1, kind: .timedOut, trigger: .alarmTime)])
    }

    @Test("REM inside the window does not ring; awake does")
    func remDoesNotRingAwakeDoes() {
        #expect(Self.play([Self.workdaysSmart30], script: [(-60, .deep), (-25, .rem)]).heard.first == Heard(minute: 0, kind: .ringing, trigger: .alarmTime))
        #expect(Self.play([Self.workdaysSmart30], script: [(-60, .deep), (-25, .rem), (-7, .awake)]).heard.first == Heard(minute: -7, kind: .ringing, trigger: .smartWindow))
    }

    @Test("already in light sleep when the window opens: it rings at the window's first minute")
    func lightBeforeTheWindowRingsWhenItOpens() {
        let (heard, _) = Self.play([Self.workdaysSmart30], script: [(-60, .deep), (-45, .light)])
        #expect(heard.first == Heard(minute: -30, kind: .ringing, trigger: .smartWindow))
    }

    @Test("no stage known (not worn), or no window: it rings at its time")
    func withoutStageOrWindowItRingsAtItsTime() {
        #expect(Self.play([Self.workdaysSmart30], script: [(-60, nil)]).heard.first == Heard(minute: 0, kind: .ringing, trigger: .alarmTime))
        var plain = Self.workdaysSmart30
        plain.smartWindow = 0
        #expect(Self.play([plain], script: [(-60, .light)]).heard.first == Heard(minute: 0, kind: .ringing, trigger: .alarmTime))
    }

    @Test("a workdays alarm stays silent on a Saturday; a disabled one always")
    func repeatDaysAndDisabledAlarmsAreHonoured() {
        let saturday = Self.mondaySeven.addingTimeInterval(5 * 86_400)
        #expect(Self.play([Self.workdaysSmart30], script: [(-60, .light)], base: saturday).heard.isEmpty)
        var off = Self.workdaysSmart30
        off.isEnabled = false
        #expect(Self.play([off], script: [(-60, .light)]).heard.isEmpty)
    }

    @Test("a once-alarm that rang early is reported for switching off and rings no more")
    func onceAlarmRingsOnceAndIsSwitchedOff() {
        let once = Alarm(slot: 4, hour: 7, minute: 0, repeatDays: .once, smartWindow: 20)
        let (heard, changes) = Self.play([once], script: [(-60, .deep), (-15, .light)], to: 30)
        #expect(heard.filter { $0.kind == .ringing } == [Heard(minute: -15, kind: .ringing, trigger: .smartWindow)])
        #expect(changes.contains(.onceAlarmRang(slot: 4)))
    }

    @Test("the watch's local time: 07:00 in Berlin in November is 06:00 UTC")
    func alarmsRingInTheWatchsZone() {
        var berlin = Calendar(identifier: .gregorian)
        berlin.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let (heard, _) = Self.play([Self.workdaysSmart30], script: [(-200, .deep)], from: -200, to: 5, calendar: berlin)
        #expect(heard.first == Heard(minute: -60, kind: .ringing, trigger: .alarmTime))
    }

    @Test("snooze: it rings again after the snooze with trigger snoozeEnded; unanswered it times out")
    func snoozeThenTimeOut() {
        var clock = WatchAlarmClock(ringDuration: .seconds(60), snoozeMinutes: 9)
        let alarms = [Alarm(slot: 0, hour: 7, minute: 0, snoozeAllowed: true, repeatDays: .everyday)]
        _ = clock.advance(to: Self.at(-1), stage: .deep, alarms: alarms, calendar: Self.utc)
        #expect(clock.advance(to: Self.at(0), stage: .deep, alarms: alarms, calendar: Self.utc).count == 1)
        let snoozed = clock.snooze(at: Self.at(0).addingTimeInterval(20), alarms: alarms)
        #expect(snoozed == [AlarmAlert(kind: .snoozed, slot: 0, trigger: .alarmTime, time: UInt32(Self.at(0).timeIntervalSince1970) + 20, snoozeMinutes: 9)])
        #expect(clock.advance(to: Self.at(5), stage: .awake, alarms: alarms, calendar: Self.utc).isEmpty, "snoozed: quiet until the snooze ends")
        let again = clock.advance(to: Self.at(9).addingTimeInterval(20), stage: .awake, alarms: alarms, calendar: Self.utc)
        #expect(again == [.alert(AlarmAlert(kind: .ringing, slot: 0, trigger: .snoozeEnded, time: UInt32(Self.at(9).timeIntervalSince1970) + 20))])
        let ended = clock.advance(to: Self.at(10).addingTimeInterval(20), stage: .awake, alarms: alarms, calendar: Self.utc)
        #expect(ended == [.alert(AlarmAlert(kind: .timedOut, slot: 0, trigger: .snoozeEnded, time: UInt32(Self.at(10).timeIntervalSince1970) + 20))])
    }

    @Test("an alarm without snooze keeps ringing when the wearer asks for one")
    func snoozeIsRefusedWhereTheAlarmDoesNotAllowIt() {
        var clock = WatchAlarmClock()
        let alarms = [Alarm(slot: 2, hour: 7, minute: 0, snoozeAllowed: false, repeatDays: .everyday)]
        _ = clock.advance(to: Self.at(-1), stage: nil, alarms: alarms, calendar: Self.utc)
        _ = clock.advance(to: Self.at(0), stage: nil, alarms: alarms, calendar: Self.utc)
        #expect(clock.snooze(at: Self.at(0), alarms: alarms).isEmpty)
        #expect(clock.active[2] != nil)
        #expect(clock.dismiss(at: Self.at(0)).map(\.kind) == [.dismissed])
    }

    @Test("RING smartWake stands for the next occurrence: rings, then alreadyRinging, alreadyRang, and no ring at 07:00")
    func ringSmartWakeReplacesTheOccurrence() throws {
        var clock = WatchAlarmClock()
        let alarms = [Self.workdaysSmart30]
        _ = clock.advance(to: Self.at(-40), stage: .deep, alarms: alarms, calendar: Self.utc)
        let (first, changes) = try clock.ring(slot: 0, reason: .smartWake, alarms: alarms, calendar: Self.utc, fallback: .distantPast).get()
        #expect(first == .ringing)
        #expect(changes == [.alert(AlarmAlert(kind: .ringing, slot: 0, trigger: .ringSmartWake, time: UInt32(Self.at(-40).timeIntervalSince1970)))])
        #expect(try clock.ring(slot: 0, reason: .smartWake, alarms: alarms, calendar: Self.utc, fallback: .distantPast).get().0 == .alreadyRinging)
        _ = clock.dismiss(at: Self.at(-39))
        #expect(try clock.ring(slot: 0, reason: .smartWake, alarms: alarms, calendar: Self.utc, fallback: .distantPast).get().0 == .alreadyRang)
        var later: [WatchAlarmClock.Change] = []
        for minute in -38...5 { later += clock.advance(to: Self.at(minute), stage: .light, alarms: alarms, calendar: Self.utc) }
        #expect(later.isEmpty, "the occurrence rang already: nothing at 07:00, no smart ring either")
    }

    @Test("RING test changes nothing: the alarm still rings at its time")
    func ringTestLeavesTheAlarmAlone() throws {
        var clock = WatchAlarmClock()
        let alarms = [Self.workdaysSmart30]
        _ = clock.advance(to: Self.at(-50), stage: .deep, alarms: alarms, calendar: Self.utc)
        #expect(try clock.ring(slot: 0, reason: .test, alarms: alarms, calendar: Self.utc, fallback: .distantPast).get().0 == .ringing)
        _ = clock.dismiss(at: Self.at(-50))
        var heard: [AlarmAlert] = []
        for minute in -49...0 {
            for case let .alert(alert) in clock.advance(to: Self.at(minute), stage: .deep, alarms: alarms, calendar: Self.utc) { heard.append(alert) }
        }
        #expect(heard.map(\.trigger) == [.alarmTime])
    }

    @Test("RING is refused for an empty slot, a disabled alarm, and an occurrence more than 255 minutes away")
    func ringRefusals() {
        var clock = WatchAlarmClock()
        var alarms = [Self.workdaysSmart30]
        _ = clock.advance(to: Self.at(-300), stage: .deep, alarms: alarms, calendar: Self.utc)
        func refusal(_ slot: UInt8) -> String? {
            if case let .failure(refused) = clock.ring(slot: slot, reason: .smartWake, alarms: alarms, calendar: Self.utc, fallback: .distantPast) { return refused.message }
            return nil
        }
        #expect(refusal(3) == "slot 3 holds no alarm")
        #expect(refusal(0) == "slot 0: next occurrence 07:00 is 300 minutes away, limit 255")
        alarms[0].isEnabled = false
        #expect(refusal(0) == "slot 0: the alarm is disabled")
    }
}
