import Foundation
import Testing
import TSModels
import TSWatchService

/// Smart wake decided over scripted nights: the alarm at 07:00 Berlin time with a 30-minute
/// window, the watch's stages at known minutes of the window.
@Suite struct SmartWakeTests {
    let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 07:00 on Monday 2026-11-23 in Berlin (06:00 UTC).
    let alarmTime = Date(timeIntervalSince1970: 1_795_413_600)
    let alarm = Alarm(slot: 1, label: "Work", hour: 7, minute: 0, repeatDays: .workdays)
    var wake: SmartWake { SmartWake(windows: [1: 30], timeZone: zone) }

    /// Runs a night minute by minute from 06:00 to 07:05: `stageAt(minute of the window)` is the
    /// stage the watch last reported (nil: no live session). Returns the minute of the window
    /// the gateway rang at, whether it announced the window, and whether it left the ring to the watch.
    func night(_ stageAt: (Int) -> SleepStage?, alarms: [Alarm]? = nil, settledBefore: Set<SmartWake.Occurrence> = []) -> (rang: Int?, announced: Bool, leftToWatch: Bool) {
        var settled = settledBefore, announced: Set<SmartWake.Occurrence> = []
        var rang: Int?, left = false
        for minute in -30...5 {
            let now = alarmTime + TimeInterval(minute * 60)
            for decision in wake.decide(now: now, stage: stageAt(minute + 30), alarms: alarms ?? [alarm], settled: settled, announced: announced) {
                switch decision {
                case let .windowStarted(occurrence, start):
                    #expect(start == alarmTime - 1800 && occurrence.time == alarmTime && occurrence.slot == 1)
                    announced.insert(occurrence)
                case let .ring(occurrence, _):
                    #expect(rang == nil, "rings at most once")
                    rang = minute + 30
                    settled.insert(occurrence)
                case let .leftToWatch(occurrence):
                    left = true
                    settled.insert(occurrence)
                }
            }
        }
        return (rang, !announced.isEmpty, left)
    }

    @Test func lightSleepAtMinuteNOfTheWindowRingsAtN() {
        for n in [0, 7, 29] {
            let result = night { $0 < n ? .deep : .light }
            #expect(result.rang == n && result.announced && !result.leftToWatch, "light from minute \(n)")
        }
        #expect(night { $0 < 12 ? .rem : .awake }.rang == 12, "awake counts as well as light")
    }

    @Test func deepSleepThroughoutLeavesTheRingToTheWatchAtItsTime() {
        let result = night { _ in .deep }
        #expect(result.rang == nil && result.announced && result.leftToWatch)
        #expect(night { _ in .rem }.rang == nil)
    }

    @Test func noStagesBecauseTheLinkIsLostRingsNothingAndTheWatchRingsAtItsTime() {
        let result = night { _ in nil }
        #expect(result.rang == nil && result.leftToWatch)
        // Light sleep before the link was lost at minute 10 would have rung at once; lost before: nothing.
        #expect(night { $0 < 10 ? .deep : nil }.rang == nil)
    }

    @Test func anOccurrenceAlreadySettledBeforeARestartDoesNotRingAgain() {
        let occurrence = SmartWake.Occurrence(slot: 1, time: alarmTime)
        let result = night({ _ in .light }, settledBefore: [occurrence])
        #expect(result.rang == nil && !result.leftToWatch)
    }

    @Test func onlyEnabledAlarmsOnTheirDaysWithAWindowTakePart() {
        var disabled = alarm; disabled.isEnabled = false
        #expect(night({ _ in .light }, alarms: [disabled]).rang == nil)
        var weekend = alarm; weekend.repeatDays = .weekend
        #expect(night({ _ in .light }, alarms: [weekend]).rang == nil, "Monday is not a weekend day")
        var otherSlot = alarm; otherSlot.slot = 4
        #expect(night({ _ in .light }, alarms: [otherSlot]).rang == nil, "slot 4 has no window")
        var once = alarm; once.repeatDays = .once
        #expect(night({ _ in .light }, alarms: [once]).rang == 0)
    }

    @Test func aWindowAcrossMidnightBelongsToTheNextDaysAlarm() {
        let early = Alarm(slot: 0, label: "", hour: 0, minute: 10, repeatDays: .everyday)
        let wake = SmartWake(windows: [0: 30], timeZone: zone)
        let beforeMidnight = alarmTime - 7 * 3600 - 10 * 60   // 23:50 Sunday, 20 minutes before 00:10
        let decisions = wake.decide(now: beforeMidnight, stage: .light, alarms: [early], settled: [], announced: [])
        #expect(decisions.contains { if case let .ring(occurrence, _) = $0 { occurrence.time == beforeMidnight + 1200 } else { false } }, "\(decisions)")
    }
}
