import Foundation
import TSBlueZ
import TSFamilyKit
import TSHuami
import TSHuamiPeripheral
import TSHuamiSimulator
import TSModels
import TSSimulatorPeripheral

extension SimulatedPeripheralFamily {
    /// The simulated Huami band (a Mi Band 5 unless told otherwise: 8-byte samples; the nights of
    /// the project's generator for the seed, days and clock) behind BlueZ, with the band's GATT
    /// profile and its auth key `HuamiAuthKey.simulatorDefault`.
    public static let huami = SimulatedPeripheralFamily(
        options: [.fault, .heartRateTruth],
        faultKinds: HuamiBandFaults.kinds,
        validate: { settings throws(SimulateSettingsError) in
            for fault in settings.faults { _ = try HuamiBandFaults.parse(fault) }
        },
        run: { session in try await runBand(session) })

    private static func runBand(_ session: PeripheralSession) async throws {
        let settings = session.settings
        var configuration = SimulatedHuamiBand.Configuration()
        configuration.answerTiming = try settings.parsedAnswerTiming()
        configuration.pacing = .peripheral
        let history = HuamiBandHistory(seed: settings.seed, timeZone: .current, now: session.now, days: settings.days, format: configuration.sampleFormat)
        let records = history.sleepItems
        if let groundTruth = settings.groundTruth { try session.writeJSON(records, to: groundTruth) }
        if let heartRateTruth = settings.heartRateTruth {
            try session.writeJSON(history.heartRates.map { ["time": Int64($0.time.timeIntervalSince1970), "bpm": Int64($0.bpm)] }, to: heartRateTruth)
        }
        // The band's clock starts at the session's (TSGATEWAY_SIMULATOR_NOW pins it) and runs.
        let start = session.now, wall = Date()
        let band = SimulatedHuamiBand(configuration: configuration, history: history, now: { start.addingTimeInterval(Date().timeIntervalSince(wall)) })
        let faults = try settings.faults.map { fault throws(SimulateSettingsError) in try HuamiBandFaults.parse(fault) }
        for fault in faults { await band.inject(fault) }
        await band.onEvent { line in session.say("band: \(line)") }
        let peripheral = HuamiSimulatorPeripheral(bluez: session.bluez, band: band, adapter: session.adapter)
        peripheral.report = session.say
        try await peripheral.start()
        let level = await band.battery.level
        session.say("simulated band \(configuration.name) advertising on \(session.adapter.name) (\(session.adapter.address)), service \(HuamiGATT.service), dialect huami, "
            + "firmware \(configuration.firmware), battery \(level) %, \(configuration.sampleFormat.size)-byte samples of \(history.minutes) minutes "
            + "(\(records.count) sleep records); answers \(configuration.answerTiming); \(faults.count) faults queued; Ctrl-C stops it, SIGUSR1 advertises anew, SIGUSR2 lowers the battery")
        let readvertise = session.advertiseAnewOnSIGUSR1 { try await peripheral.advertiseAgain() }
        let drains = session.onSignal(SIGUSR2) {
            let level = await max(0, Int(band.battery.level) - 5)
            await band.setBattery(HuamiBattery(level: UInt8(level), state: 0))
            session.say("battery now \(level) %")
        }
        await session.waitForStop()
        readvertise.cancel()
        drains.cancel()
        await peripheral.stop()
        let statistics = await band.statistics
        session.say("\(statistics.connections) connections: \(statistics.writesReceived) writes received (\(statistics.writesRefused) refused), "
            + "\(statistics.authsAccepted) auths accepted, \(statistics.authsRefused) refused, \(statistics.fetches) fetches, \(statistics.transfers) transfers "
            + "(\(statistics.dataPacketsSent) data packets, \(statistics.transfersCut) cut), \(statistics.acknowledgements) acknowledgements, "
            + "\(statistics.heartRateMeasurements) heart-rate measurements")
        if await band.clockSet != nil { session.say("the band's clock was last set to \(await band.clock())") }
        let alarms = await band.alarmSlots.compactMap { $0 }
        session.say("the band's alarms: " + (alarms.isEmpty ? "none" : alarms.map(SimulatedHuamiBand.describe).joined(separator: "; ")))
        session.say("stopped")
    }
}

/// `--fault KIND[:N]` of the simulated band: `wrong-key` from the start, the others each once, to
/// the next transfer.
enum HuamiBandFaults {
    static let kinds = "wrong-key, cut-transfer:N (the link drops after N data packets), skip-counter:N, short-packet:N (packet N from 0), count-off:N (bytes, may be negative)"

    static func parse(_ text: String) throws(SimulateSettingsError) -> SimulatedHuamiBand.Fault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("wrong-key", 1): return .wrongKey
        case ("count-off", 2):
            guard let bytes = Int(parts[1]), bytes != 0 else { throw SimulateSettingsError("--fault count-off needs a number of bytes other than 0 (8, -4); got \"\(parts[1])\"") }
            return .countOff(bytes: bytes)
        case (let kind, 2) where ["cut-transfer", "skip-counter", "short-packet"].contains(kind):
            guard let count = Int(parts[1]), count >= 0 else { throw SimulateSettingsError("--fault \(kind) needs a packet number 0 or more; got \"\(parts[1])\"") }
            switch kind {
            case "cut-transfer": return .cutTransfer(afterPackets: count)
            case "skip-counter": return .skipCounter(packet: count)
            default: return .shortPacket(packet: count)
            }
        default:
            throw SimulateSettingsError("--fault \"\(text)\" is not a fault of the simulated band; use \(kinds)")
        }
    }
}
