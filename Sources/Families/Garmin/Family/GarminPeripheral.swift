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
    public static let garmin = SimulatedPeripheralFamily(options: [.heartRateTruth], run: { session in try await runWatch(session) })

    private static func runWatch(_ session: PeripheralSession) async throws {
        let settings = session.settings
        let history = try GarminWatchHistory(seed: settings.seed, timeZone: .current, now: session.now, days: settings.days)
        let watch = SimulatedGarminWatch(history: history)
        if let groundTruth = settings.groundTruth { try session.writeJSON(history.sleepItems, to: groundTruth) }
        if let heartRateTruth = settings.heartRateTruth {
            try session.writeJSON(history.heartRates.map { ["time": Int64($0.time.timeIntervalSince1970), "bpm": Int64($0.bpm)] }, to: heartRateTruth)
        }
        let peripheral = GarminSimulatorPeripheral(bluez: session.bluez, watch: watch, adapter: session.adapter, answerTiming: try settings.parsedAnswerTiming())
        peripheral.report = session.say
        try await peripheral.start()
        session.say("simulated Garmin watch \(peripheral.name) advertising on \(session.adapter.name) (\(session.adapter.address)), service \(GarminGATT.service), "
            + "dialect \(Dialect.garmin), with \(history.directory.count) FIT files (\(history.sleepItems.count) sleep records, \(history.heartRates.count) heart-rate samples); "
            + "answers \(peripheral.answers.timing); Ctrl-C stops it, SIGUSR1 advertises anew")
        let readvertise = session.advertiseAnewOnSIGUSR1 { try await peripheral.advertiseAgain() }
        await session.waitForStop()
        readvertise.cancel()
        await peripheral.stop()
        let statistics = await watch.statistics
        let archived = await watch.archived
        session.say("\(statistics.connections) connections: \(statistics.framesReceived) GFDI frames received (\(statistics.refused) refused), "
            + "\(statistics.handshakesCompleted) handshakes, \(statistics.timeAnswers) time answers (\(statistics.otherReferences) naming another reference), \(statistics.downloads) downloads "
            + "(\(statistics.chunksSent) chunks), \(archived.count) files archived")
        if let time = await watch.hostTime {
            session.say("the host last gave the time \(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(GarminTime.unix(time.now))))), offset \(time.utcOffset) s")
        }
        session.say("stopped")
    }
}
