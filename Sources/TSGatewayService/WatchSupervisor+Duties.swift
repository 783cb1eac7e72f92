import Foundation
import TSModels
import TSWatchService

/// The periodic duties while a watch is connected: scheduled syncs, setting the watch's clock,
/// reading its battery, the live session's heartbeat; and what resumes when the disk takes writes again.
extension WatchSupervisor {
    func duties() async {
        // A watch that hands over no sleep records has nothing to sync.
        var syncs = true
        if status.info != nil { syncs = await watch.capabilities.sleepSync != nil }
        while !Task.isCancelled {
            noticeWallClockStep()
            var now = ContinuousClock.now
            let timeDue = lastTimeSync.map { now - $0 >= settings.timeSyncInterval } ?? true
            // The clock is looked at when it matters: a sync's range and the watch's clock end at "now".
            if (syncs && now >= nextScheduledSync) || timeDue, nextClockCheck.map({ now >= $0 }) ?? true {
                await lookAtTheClock()
                now = ContinuousClock.now
            }
            if syncs, now >= nextScheduledSync, clockHeld == nil {
                nextScheduledSync = now + settings.syncInterval
                do {
                    _ = try await syncSleep(SyncRequest())
                } catch is CancellationError {
                    return
                } catch {
                    // A disk that refused the records is said once, for the whole gateway (`StorageHealth`).
                    if StorageHealth.condition(of: error) == nil { logger.warning("\(id): scheduled sync failed: \(error)") }
                    nextScheduledSync = ContinuousClock.now + min(settings.syncInterval, .seconds(60))
                }
            }
            if timeDue, clockHeld == nil {
                do {
                    try await watch.syncTime()
                    lastTimeSync = now
                    watchClockSet()
                } catch where ErrorCategory.of(error) == .notSupported {
                    logger.info("\(id): the watch's clock is not set: \(error)")
                    lastTimeSync = now
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("\(id): cannot set the watch's clock: \(error)")
                    lastTimeSync = now - settings.timeSyncInterval + .seconds(60)
                }
            }
            if lastBatteryRead.map({ now - $0 >= settings.batteryInterval }) ?? true {
                lastBatteryRead = now
                await readBattery()
            }
            await save("live session heartbeat") { [sessions, wallClock] in try await sessions.heartbeat(now: wallClock.now()) }
            let nextBattery = (lastBatteryRead ?? now) + settings.batteryInterval
            let nextTime = (lastTimeSync ?? now) + settings.timeSyncInterval
            var until = min(nextBattery, now + .seconds(60))
            if clockHeld == nil {
                until = min(until, syncs ? nextScheduledSync : until, nextTime)
            } else if let nextClockCheck {
                // The held sync and clock are overdue: only the next look at the clock can release them.
                until = min(until, nextClockCheck)
            }
            await dutiesPause.sleep(for: until - ContinuousClock.now)
            if Task.isCancelled { return }
        }
    }

    /// The disk takes writes again: a wrist edit it refused is stored, and the sync it refused runs now.
    func storageWritable() async {
        if let change = unsavedAlarmChange {
            unsavedAlarmChange = nil
            if await save("alarm change", { [operations] in try await operations.recordWatchSideChange(change) }) == nil, unsavedAlarmChange == nil {
                unsavedAlarmChange = change
            } else {
                logger.info("\(id): the alarm change made on the watch is stored now")
            }
        }
        nextScheduledSync = ContinuousClock.now
        dutiesPause.wake()
    }
}
