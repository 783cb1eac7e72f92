import Foundation
import TSModels
import TSGatewayAPI
import TSStore
import TSWatchService

/// The heart rate and the battery level of the watch one supervisor holds, as they are notified
/// or read.
extension WatchSupervisor {
    /// Stores heart-rate samples as they come (a few at a time: one write a sample would keep
    /// the disk busy all night) and announces each one; what is buffered is written when the
    /// link ends or the daemon stops.
    func recordHeartRate(_ samples: AsyncThrowingStream<HeartRateSample, any Error>) async {
        var pending: [HeartRateSample] = []
        var lastWrite = ContinuousClock.now
        do {
            for try await sample in samples {
                updateStatus { $0.heartRate = sample.bpm }
                publish(GatewayEvent(.heartRate(sample), watch: id, time: sample.time))
                heartRateReaders.send(sample)
                pending.append(sample)
                if pending.count >= Self.heartRateBatch || ContinuousClock.now - lastWrite >= Self.heartRateWriteInterval {
                    let batch = pending
                    pending.removeAll()
                    lastWrite = .now
                    await save("heart-rate samples") { [store, id] in try await store.storeHeartRate(batch, watch: id) }
                }
            }
        } catch is CancellationError {
        } catch {
            if !Task.isCancelled { logger.info("\(id): heart-rate notifications ended: \(error)") }
        }
        let rest = pending
        await save("heart-rate samples") { [store, id] in try await store.storeHeartRate(rest, watch: id) }
    }

    static let heartRateBatch = 10
    static let heartRateWriteInterval: Duration = .seconds(10)

    func batteryNotified(_ level: Int) {
        let changed = status.batteryLevel != level
        updateStatus { $0.batteryLevel = level }
        if changed { publish(GatewayEvent(.battery(level: level), watch: id)) }
    }

    func readBattery() async {
        do {
            let battery = try await watch.battery()
            let changed = status.batteryLevel != Int(battery.level)
            updateStatus { $0.batteryLevel = Int(battery.level); $0.batteryState = battery.state }
            if changed { publish(GatewayEvent(.battery(level: Int(battery.level)), watch: id)) }
        } catch {
            logger.info("\(id): battery not read: \(error)")
        }
    }
}
