import Foundation
import TSModels
import TSProtocol

extension SimulatedWatch {
    /// The alarm table as this connection may see it: without smart windows unless the central
    /// enabled them (wire-protocol.md §9.3).
    var alarmsAsSent: [Alarm] {
        let alarms = state.alarms.sorted { $0.slot < $1.slot }
        guard link?.extensions.contains(.smartWindows) != true else { return alarms }
        return alarms.map { alarm in
            var hidden = alarm
            hidden.smartWindow = 0
            return hidden
        }
    }

    /// The watch's local time: the zone (or else the offset) of the last TIME_SET; UTC before one.
    var watchCalendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = state.zone.flatMap(TimeZone.init(identifier:))
            ?? state.utcOffset.flatMap { TimeZone(secondsFromGMT: Int($0)) }
            ?? TimeZone(identifier: "UTC")!
        return calendar
    }

    /// Moves the watch's clock to `time`: alarms due by then ring (early ones at a light or awake
    /// stage inside their smart window), unanswered rings time out, snoozes end.
    public func advanceClock(to time: Date) async {
        await apply(alarmClock.advance(to: time, stage: wearerStage, alarms: state.alarms, calendar: watchCalendar))
    }

    /// The wearer is in `stage` from `time` on (nil: took the watch off); the clock moves there.
    public func setWearerStage(_ stage: SleepStage?, at time: Date) async {
        wearerStage = stage
        await advanceClock(to: time)
    }

    /// The wearer stops whatever rings, as with the watch's button.
    public func dismissRinging(at time: Date) async {
        await apply(alarmClock.dismiss(at: time).map(WatchAlarmClock.Change.alert))
    }

    /// The wearer asks to be reminded later; alarms that do not allow snoozing keep ringing.
    public func snoozeRinging(at time: Date) async {
        await apply(alarmClock.snooze(at: time, alarms: state.alarms).map(WatchAlarmClock.Change.alert))
    }

    /// Calls `handler` with every alert from now on (the `simulate` command prints them).
    public func onAlarmAlert(_ handler: @escaping @Sendable (AlarmAlert) -> Void) {
        alertObservers.append(handler)
    }

    /// Until cancelled: moves the clock to `now()` every `period`, as a watch's own clock does.
    public func runAlarmClock(every period: Duration = .seconds(1), now: @escaping @Sendable () -> Date = { Date() }) async {
        while !Task.isCancelled {
            await advanceClock(to: now())
            do { try await Task.sleep(for: period) } catch { return }
        }
    }

    /// Reports alerts (to a central that enabled them) and switches off once-alarms that rang.
    func apply(_ changes: [WatchAlarmClock.Change]) async {
        for change in changes {
            switch change {
            case let .alert(alert):
                alertLog.append(alert)
                for observer in alertObservers { observer(alert) }
                if link?.extensions.contains(.alarmAlerts) == true { await sendEvent(.alarmAlert(alert)) }
            case let .onceAlarmRang(slot):
                guard let index = state.alarms.firstIndex(where: { $0.slot == slot }), state.alarms[index].isEnabled else { continue }
                await editAlarmsOnWatch(origin: .onceAlarmFired) { $0[index].isEnabled = false }
            }
        }
    }
}
