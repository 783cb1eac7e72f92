import ArgumentParser
import Foundation
import TSBlueZ
import TSDevice
import TSModels
import TSNpkSimulator
import TSSimulator
import TSSimulatorPeripheral

/// `tsgateway simulate --dialect npk`: the in-process simulated TopStep watch (the same nights
/// for the same seed as `--simulate --dialect npk`) behind BlueZ, on the NPK dialect's GATT profile.
extension SimulateCommand {
    func validateDialect() throws {
        guard dialect == .protocolV1 || dialect == .npk || dialect == .qring else {
            throw ValidationError("--dialect must be \(Dialect.protocolV1), \(Dialect.npk) or \(Dialect.qring); got \"\(dialect)\"")
        }
        if dialect != .protocolV1,
           liveStageInterval != nil || dropLinkAfterPages != nil || noStandardServices || protocolVersion != SimulatedProtocol.version1_1.rawValue {
            throw ValidationError("--live-stage-interval, --drop-link-after-pages, --no-standard-services and --protocol are for protocol v1; "
                + (dialect == .npk ? "an NPK watch takes --sleep-fault" : "a QRing ring takes --ring-fault"))
        }
        if dialect != .npk, !sleepFault.isEmpty || notificationSize != .multipleNotificationEntry || heartRateHistory {
            throw ValidationError("--sleep-fault, --notification-size and --heart-rate-history are for --dialect npk")
        }
        if dialect != .qring, !ringFault.isEmpty || heartRateTruth != nil || stepsTruth != nil {
            throw ValidationError("--ring-fault, --heart-rate-truth and --steps-truth are for --dialect qring")
        }
    }

    func runNpk() async throws {
        guard let profile = WatchDialect.npk.gatt else { throw CLIFailure("the NPK dialect has no GATT profile", status: .software) }
        try await withBlueZ { bluez in
            var found = try await bluez.adapter(adapter)
            if !found.powered {
                try await bluez.setPowered(true, adapter: found)
                found = try await bluez.adapter(adapter)
                print("powered on \(found.name)")
            }
            let now = simulatorNow()
            let records = SleepDataGenerator(seed: seed, timeZone: .current).records(days: days, lastMorning: now, notAfter: now)
            if let groundTruth { try Self.write(records, to: groundTruth) }
            var configuration = SimulatedNpkWatch.Configuration()
            configuration.timeZone = .current
            // The heart rate it measured on its own, as the in-process watch of the same seed holds it.
            let end = Int64(now.timeIntervalSince1970)
            let heartRate = heartRateHistory
                ? HeartRateHistoryGenerator(seed: seed).samples(start: end - Int64(days) * 86_400, end: end, records: records) : []
            let simulator = SimulatedNpkWatch(configuration: configuration, records: records, heartRate: heartRate)
            await simulator.queueSleepFaults(sleepFault)
            let peripheral = NpkSimulatorPeripheral(bluez: bluez, simulator: simulator, adapter: found, profile: profile, chunking: notificationSize)
            peripheral.report = { line in print(line); fflush(nil) }
            try await peripheral.start()
            print("simulated watch advertising on \(found.name) (\(found.address)), service \(profile.service.lowercased()), dialect \(Dialect.npk), with \(records.count) sleep records; notifications of \(notificationSize.rawValue) bytes; Ctrl-C stops it, SIGUSR1 edits an alarm on the wrist, SIGUSR2 lowers the battery")
            fflush(nil)
            let edits = Self.onSignal(SIGUSR1) {
                await simulator.nudgeFirstAlarmOnWrist()
                print("watch-side alarm edit sent"); fflush(nil)
            }
            let drains = Self.onSignal(SIGUSR2) {
                let level = await max(0, Int(simulator.battery.level) - 5)
                await simulator.setBattery(BatteryStatus(level: UInt8(level), state: .discharging))
                print("battery now \(level) %"); fflush(nil)
            }
            await Self.waitForStop(duration: duration)
            edits.cancel()
            drains.cancel()
            await peripheral.stop()
            let statistics = await simulator.statistics
            print("\(statistics.connections) connections: \(statistics.framesReceived) frames received (\(statistics.framesRefused) refused, \(statistics.retransmissionsReceived) retransmissions), \(statistics.sleepSyncs) sleep syncs, \(statistics.sleepDaysSent) sleep days sent, \(statistics.linksLost) links lost by fault injection")
            print("stopped")
        }
    }
}

/// `--sleep-fault KIND:N`.
enum NpkSleepFaultChoice {
    static func parse(_ text: String) throws -> SimulatedNpkWatch.SleepFault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let count = Int(parts[1]), count >= 0 else {
            throw ValidationError("--sleep-fault must be KIND:N with N 0 or more (corrupt-day:3, drop-day:0, swap-days:4, lose-link-after-days:10); got \"\(text)\"")
        }
        switch parts[0] {
        case "corrupt-day": return .corruptDay(count)
        case "drop-day": return .dropDay(count)
        case "swap-days": return .swapDays(count)
        case "lose-link-after-days":
            guard count >= 1 else { throw ValidationError("--sleep-fault lose-link-after-days needs 1 or more days; got \(count)") }
            return .loseLinkAfterDays(count)
        default:
            throw ValidationError("--sleep-fault \"\(parts[0])\" is not a fault; use corrupt-day, drop-day, swap-days or lose-link-after-days")
        }
    }
}

extension NpkNotificationChunking: ExpressibleByArgument {}
