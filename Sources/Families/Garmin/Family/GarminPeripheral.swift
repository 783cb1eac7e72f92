import Foundation
import TSBlueZ
import TSFamilyKit
import TSGarmin
import TSGarminPeripheral
import TSGarminSimulator
import TSModels
import TSSimulatorPeripheral

extension SimulatedPeripheralFamily {
    /// The simulated Garmin watch (the same nights and heart rate for the same seed, days and
    /// clock as `--simulate --dialect garmin`) behind BlueZ, with the Multi-Link service.
    public static let garmin = SimulatedPeripheralFamily(
        options: [.heartRateTruth, .fault], faultKinds: GarminFaults.kinds,
        validate: { settings throws(SimulateSettingsError) in
            for fault in settings.faults { _ = try GarminFaults.parse(fault) }
        },
        run: { session in try await runWatch(session) })

    private static func runWatch(_ session: PeripheralSession) async throws {
        let settings = session.settings
        let history = try GarminWatchHistory(seed: settings.seed, timeZone: .current, now: session.now, days: settings.days)
        var configuration = SimulatedGarminWatch.Configuration()
        configuration.deviceInformationDelay = .milliseconds(50)
        let watch = SimulatedGarminWatch(history: history, configuration: configuration)
        let faults = try settings.faults.map { fault throws(SimulateSettingsError) in try GarminFaults.parse(fault) }
        for fault in faults { await watch.inject(fault) }
        if let groundTruth = settings.groundTruth { try session.writeJSON(history.sleepItems, to: groundTruth) }
        if let heartRateTruth = settings.heartRateTruth {
            try session.writeJSON(history.heartRates.map { ["time": Int64($0.time.timeIntervalSince1970), "bpm": Int64($0.bpm)] }, to: heartRateTruth)
        }
        // Each refused frame is said as it is refused, so that a log tells whose it was by when.
        await watch.onRefusal { reason in session.say("refused a frame from the central: \(reason)") }
        let peripheral = GarminSimulatorPeripheral(bluez: session.bluez, watch: watch, adapter: session.adapter, answerTiming: try settings.parsedAnswerTiming())
        peripheral.report = session.say
        try await peripheral.start()
        session.say("simulated Garmin watch \(peripheral.name) advertising on \(session.adapter.name) (\(session.adapter.address)), service \(GarminGATT.service), "
            + "dialect \(Dialect.garmin), with \(history.directory.count) FIT files (\(history.sleepItems.count) sleep records, \(history.heartRates.count) heart-rate samples); "
            + "answers \(peripheral.answers.timing); \(faults.count) faults queued; Ctrl-C stops it, SIGUSR1 advertises anew")
        let readvertise = session.advertiseAnewOnSIGUSR1 { try await peripheral.advertiseAgain() }
        await session.waitForStop()
        readvertise.cancel()
        await peripheral.stop()
        let statistics = await watch.statistics
        let archived = await watch.archived
        session.say("\(statistics.connections) connections: \(statistics.framesReceived) GFDI frames received (\(statistics.refused) refused), "
            + "\(statistics.handshakesCompleted) handshakes, \(statistics.timeAnswers) time answers (\(statistics.otherReferences) naming another reference), \(statistics.downloads) downloads "
            + "(\(statistics.chunksSent) chunks, \(statistics.transfersCut) cut, \(statistics.chunksDamaged) damaged), \(archived.count) files archived, "
            + "\(statistics.settingsFilesTaken) settings files taken")
        if let time = await watch.hostTime {
            session.say("the host last gave the time \(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(GarminTime.unix(time.now))))), offset \(time.utcOffset) s")
        }
        session.say("stopped")
    }
}

/// `--fault KIND[:N]` of the simulated Garmin watch, each once, in the next download of a FIT file.
enum GarminFaults {
    static let kinds = "cut-transfer:N (the link lost after N chunks), wrong-crc (its first chunk's running CRC), unsent-file (the directory lists a sleep file it never sends)"

    static func parse(_ text: String) throws(SimulateSettingsError) -> SimulatedGarminWatch.Fault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("wrong-crc", 1): return .wrongCRC
        case ("unsent-file", 1): return .unsentFile
        case ("cut-transfer", 2):
            guard let count = Int(parts[1]), count >= 0 else {
                throw SimulateSettingsError("--fault cut-transfer needs a number of chunks (0 or more) before the link is lost; got \"\(parts[1])\"")
            }
            return .cutTransfer(afterChunks: count)
        default:
            throw SimulateSettingsError("--fault \"\(text)\" is not a fault of the simulated Garmin watch; use \(kinds)")
        }
    }
}
