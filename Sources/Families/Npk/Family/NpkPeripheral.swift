import Foundation
import TSBlueZ
import TSFamilyKit
import TSDevice
import TSModels
import TSNpkPeripheral
import TSNpkSimulator
import TSNpkWatch
import TSSimulatedHistory
import TSSimulatorPeripheral

extension SimulatedPeripheralFamily {
    /// The simulated TopStep watch (the same nights for the same seed as `--simulate --dialect
    /// npk`) behind BlueZ, on the NPK dialect's GATT profile.
    public static let npk = SimulatedPeripheralFamily(
        options: [.fault, .notificationSize, .heartRateHistory],
        faultKinds: NpkSleepFaults.kinds,
        validate: { settings throws(SimulateSettingsError) in
            for fault in settings.faults { _ = try NpkSleepFaults.parse(fault) }
            if let size = settings.notificationSize, NpkNotificationChunking(rawValue: size) == nil {
                throw SimulateSettingsError("--notification-size must be \(NpkNotificationChunking.allCases.map(\.rawValue).joined(separator: " or ")); got \"\(size)\"")
            }
        },
        run: { session in try await runNpk(session) })

    private static func runNpk(_ session: PeripheralSession) async throws {
        let settings = session.settings
        guard let profile = WatchDialect.npk.gatt else { throw CategorizedFailure(.failed, "the NPK dialect has no GATT profile") }
        let chunking = settings.notificationSize.flatMap(NpkNotificationChunking.init(rawValue:)) ?? .multipleNotificationEntry
        let records = SleepDataGenerator(seed: settings.seed, timeZone: .current).records(days: settings.days, lastMorning: session.now, notAfter: session.now)
        if let groundTruth = settings.groundTruth { try session.writeJSON(records, to: groundTruth) }
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.timeZone = .current
        // The heart rate it measured on its own, as the in-process watch of the same seed holds it.
        let end = Int64(session.now.timeIntervalSince1970)
        let heartRate = settings.heartRateHistory
            ? HeartRateHistoryGenerator(seed: settings.seed).samples(start: end - Int64(settings.days) * 86_400, end: end, records: records) : []
        let simulator = SimulatedNpkWatch(configuration: configuration, records: records, heartRate: heartRate)
        await simulator.queueSleepFaults(try settings.faults.map { fault throws(SimulateSettingsError) in try NpkSleepFaults.parse(fault) })
        let peripheral = NpkSimulatorPeripheral(bluez: session.bluez, simulator: simulator, adapter: session.adapter, profile: profile, chunking: chunking,
                                                answerTiming: try settings.parsedAnswerTiming())
        peripheral.report = session.say
        try await peripheral.start()
        session.say("simulated watch advertising on \(session.adapter.name) (\(session.adapter.address)), service \(profile.service.lowercased()), dialect \(Dialect.npk), with \(records.count) sleep records; notifications of \(chunking.rawValue) bytes; answers \(peripheral.answers.timing); Ctrl-C stops it, SIGUSR1 edits an alarm on the wrist, SIGUSR2 lowers the battery")
        let edits = session.onSignal(SIGUSR1) {
            await simulator.nudgeFirstAlarmOnWrist()
            session.say("watch-side alarm edit sent")
        }
        let drains = session.onSignal(SIGUSR2) {
            let level = await max(0, Int(simulator.battery.level) - 5)
            await simulator.setBattery(BatteryStatus(level: UInt8(level), state: .discharging))
            session.say("battery now \(level) %")
        }
        await session.waitForStop()
        edits.cancel()
        drains.cancel()
        await peripheral.stop()
        let statistics = await simulator.statistics
        session.say("\(statistics.connections) connections: \(statistics.framesReceived) frames received (\(statistics.framesRefused) refused, \(statistics.retransmissionsReceived) retransmissions), \(statistics.sleepSyncs) sleep syncs, \(statistics.sleepDaysSent) sleep days sent, \(statistics.linksLost) links lost by fault injection")
        session.say("stopped")
    }
}

/// `--fault KIND:N` of the simulated NPK watch, once per sleep sync in the order given.
enum NpkSleepFaults {
    static let kinds = "corrupt-day:N, drop-day:N, swap-days:N (day N, from 0, after day N+1), lose-link-after-days:N"

    static func parse(_ text: String) throws(SimulateSettingsError) -> SimulatedNpkWatch.SleepFault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let count = Int(parts[1]), count >= 0 else {
            throw SimulateSettingsError("--fault must be KIND:N with N 0 or more (corrupt-day:3, drop-day:0, swap-days:4, lose-link-after-days:10); got \"\(text)\"")
        }
        switch parts[0] {
        case "corrupt-day": return .corruptDay(count)
        case "drop-day": return .dropDay(count)
        case "swap-days": return .swapDays(count)
        case "lose-link-after-days":
            guard count >= 1 else { throw SimulateSettingsError("--fault lose-link-after-days needs 1 or more days; got \(count)") }
            return .loseLinkAfterDays(count)
        default:
            throw SimulateSettingsError("--fault \"\(parts[0])\" is not a fault; use corrupt-day, drop-day, swap-days or lose-link-after-days")
        }
    }
}
