import Foundation
import TSBlueZ
import TSFamilyKit
import TSGATT
import TSModels
import TSProtocol
import TSSimulatedHistory
import TSSimulator
import TSProtocolV1Peripheral
import TSSimulatorPeripheral

extension SimulatedPeripheralFamily {
    /// Protocol v1's simulated watch behind BlueZ, with the standard Device Information, Battery
    /// and Heart Rate services beside it; its heart rate follows its last night, and a live night
    /// plays with `--live-stage-interval`.
    public static let protocolV1 = SimulatedPeripheralFamily(
        options: [.dropLinkAfterPages, .protocolVersion, .noStandardServices, .liveStageInterval, .advertiseService],
        validate: { settings throws(SimulateSettingsError) in
            if let pages = settings.dropLinkAfterPages, pages < 1 { throw SimulateSettingsError("--drop-link-after-pages must be 1 or more") }
            if let text = settings.protocolVersion, SimulatedProtocol(text: text) == nil {
                throw SimulateSettingsError("--protocol must be \(SimulatedProtocol.choices); got \"\(text)\"")
            }
            if let interval = settings.liveStageInterval, !(1...3600).contains(interval) {
                throw SimulateSettingsError("--live-stage-interval must be 1…3600 seconds; got \(interval)")
            }
        },
        run: { session in try await runProtocolV1(session) })

    private static func runProtocolV1(_ session: PeripheralSession) async throws {
        let settings = session.settings
        let records = SleepDataGenerator(seed: settings.seed, timeZone: .current).records(days: settings.days, lastMorning: session.now, notAfter: session.now)
        if let groundTruth = settings.groundTruth { try session.writeJSON(records, to: groundTruth) }
        let spoken = settings.protocolVersion.flatMap(SimulatedProtocol.init(text:)) ?? .version1_1
        let simulator = SimulatedWatch(configuration: spoken.configuration, state: SimulatorState(records: records))
        await simulator.onAlarmAlert { alert in
            session.say("alarm in slot \(alert.slot): \(alert.kind.rawValue) (\(alert.trigger.rawValue))" + (alert.kind == .snoozed ? " for \(alert.snoozeMinutes) minutes" : ""))
        }
        // The alarm clock runs on the wall clock; with --live-stage-interval the night plays beside it.
        let night = SimulatedNight(simulator: simulator, interval: settings.liveStageInterval.map { .seconds($0) })
        let alarmClock = Task { await night.play() }
        let standard = settings.noStandardServices ? nil : SimulatedStandardServices()
        let service = settings.advertiseService ?? WatchGATT.service
        let peripheral = SimulatorPeripheral(bluez: session.bluez, simulator: simulator, adapter: session.adapter,
                                             advertisedService: service, dropLinkAfterPages: settings.dropLinkAfterPages,
                                             standard: standard, night: NightReplay(records: records),
                                             answerTiming: try settings.parsedAnswerTiming())
        peripheral.report = session.say
        try await peripheral.start()
        let served = standard == nil ? "protocol v1 only" : "protocol v1, Device Information, Battery, Heart Rate"
        session.say("simulated watch advertising on \(session.adapter.name) (\(session.adapter.address)), service \(service), protocol \(spoken.rawValue), answers \(peripheral.answers.timing), with \(records.count) sleep records; serves \(served); Ctrl-C stops it, SIGUSR1 edits an alarm on the watch, SIGUSR2 dismisses a ringing alarm")
        let edits = session.onSignal(SIGUSR1) {
            await simulator.nudgeFirstAlarmOnWatch()
            session.say("watch-side alarm edit sent")
        }
        let dismissals = session.onSignal(SIGUSR2) { await simulator.dismissRinging(at: Date()) }
        await session.waitForStop()
        edits.cancel()
        dismissals.cancel()
        alarmClock.cancel()
        await peripheral.stop()
        let statistics = await simulator.statistics
        session.say("\(statistics.connections) connections: \(statistics.framesReceived) frames received (\(statistics.corruptFramesReceived) corrupt), \(statistics.pagesSent) sleep pages sent (\(statistics.pagesResent) resent)")
        session.say("stopped")
    }
}
