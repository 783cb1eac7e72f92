import Foundation
import TSGatewayAPI
import TSModels

/// The watch's clock against the system's: steps of the wall clock, a clock set back, and
/// whether the system clock is trusted to set the watch's at all (`ClockDiscipline`).
extension WatchSupervisor {
    /// A step of the wall clock beyond `stepTolerance` (NTP's first answer, a clock set by hand)
    /// moves no schedule (they run on the monotonic clock), but the watch's clock was set from
    /// the clock before the step: it is set again now, and the clock's trust looked at again.
    static let stepTolerance: TimeInterval = 10

    func noticeWallClockStep() {
        let current = (wall: wallClock.now(), monotonic: ContinuousClock.now)
        defer { wallReference = current }
        guard let last = wallReference else { return }
        let step = current.wall.timeIntervalSince(last.wall) - (current.monotonic - last.monotonic).timeInterval
        guard abs(step) > Self.stepTolerance else { return }
        logger.notice("\(id): the system clock was stepped \(step > 0 ? "forward" : "back") by \(Int(abs(step).rounded())) s; the watch's clock is set again")
        if lastTimeSync != nil { watchClockAhead -= step }
        lastTimeSync = nil
        nextClockCheck = nil
    }

    /// The watch's clock is the wall clock's now: set back, what it records next starts before the cursor.
    func watchClockSet() {
        let now = Int64(wallClock.now().timeIntervalSince1970)
        if watchClockAhead > Self.stepTolerance {
            // A little before now: the watch took its time a moment before this.
            let to = now - Int64(Self.stepTolerance), from = now + Int64(watchClockAhead.rounded(.up))
            watchClockSetBack = (to: min(to, watchClockSetBack?.to ?? to), from: max(from, watchClockSetBack?.from ?? from))
        }
        watchClockAhead = 0
    }

    /// Asks the daemon's `ClockDiscipline`. The first time the system clock is not trusted the
    /// watch's clock is held: said once as a `clock` event and in the status (MQTT's state);
    /// when it is trusted again, said again with `trusted`, and the duties set the clock.
    func lookAtTheClock() async {
        switch await clock.check() {
        case let .untrusted(distrust):
            nextClockCheck = ContinuousClock.now + settings.clockCheckInterval
            guard clockHeld == nil else { return }
            clockHeld = distrust
            updateStatus { $0.clockHeld = distrust.why }
            logger.info("\(id): the watch's clock is not set, and scheduled syncs wait: \(distrust.why)")
            publish(GatewayEvent(.clock(trusted: false, reason: distrust.why), watch: id))
        case .trusted:
            nextClockCheck = nil
            guard clockHeld != nil else { return }
            clockHeld = nil
            updateStatus { $0.clockHeld = nil }
            publish(GatewayEvent(.clock(trusted: true, reason: nil), watch: id))
        }
    }
}
