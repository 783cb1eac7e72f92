import Foundation
import TSBlueZ
import TSFamilyKit
import TSModels
import TSQRing
import TSQRingPeripheral
import TSQRingSimulator
import TSSimulatorPeripheral

extension SimulatedPeripheralFamily {
    /// The simulated ring (the same nights and heart-rate log for the same seed, days and clock as
    /// `--simulate --dialect qring`) behind BlueZ, with both of the ring's pairs and Device Information.
    public static let qring = SimulatedPeripheralFamily(
        options: [.fault, .heartRateTruth, .stepsTruth],
        faultKinds: RingFaults.kinds,
        validate: { settings throws(SimulateSettingsError) in
            for fault in settings.faults { _ = try RingFaults.parse(fault) }
        },
        run: { session in try await runRing(session) })

    private static func runRing(_ session: PeripheralSession) async throws {
        let settings = session.settings
        let history = RingHistory(seed: settings.seed, timeZone: .current, now: session.now, days: settings.days)
        let ring = SimulatedRing(history: history)
        let records = history.nights.flatMap(\.items)
        if let groundTruth = settings.groundTruth { try session.writeJSON(records, to: groundTruth) }
        if let heartRateTruth = settings.heartRateTruth {
            let now = Int64(session.now.timeIntervalSince1970)
            let start = now - Int64(settings.days + 1) * 86_400
            let samples = await ring.heartRateSamples(in: start..<now + 1)
            try session.writeJSON(samples.map { ["time": Int64($0.time.timeIntervalSince1970), "bpm": Int64($0.bpm)] }, to: heartRateTruth)
        }
        if let stepsTruth = settings.stepsTruth { try session.writeJSON(StepsTruth(history.steps(day: history.today), of: history.today), to: stepsTruth) }
        let faults = try settings.faults.map { fault throws(SimulateSettingsError) in try RingFaults.parse(fault) }
        for fault in faults { await ring.inject(fault) }
        let peripheral = QRingSimulatorPeripheral(bluez: session.bluez, ring: ring, adapter: session.adapter, answerTiming: try settings.parsedAnswerTiming())
        peripheral.report = session.say
        try await peripheral.start()
        session.say("simulated ring \(ring.configuration.name) advertising on \(session.adapter.name) (\(session.adapter.address)), service \(QRingGATT.commandService), dialect \(Dialect.qring), "
            + "with \(history.nights.count) nights (\(records.count) sleep records); answers \(peripheral.answers.timing); \(faults.count) faults queued; Ctrl-C stops it, SIGUSR1 advertises anew")
        let readvertise = session.advertiseAnewOnSIGUSR1 { try await peripheral.advertiseAgain() }
        await session.waitForStop()
        readvertise.cancel()
        await peripheral.stop()
        let statistics = await ring.statistics
        session.say("\(statistics.connections) connections: \(statistics.packetsReceived) packets received (\(statistics.packetsRefused) refused), "
            + "\(statistics.sleepRequests) sleep requests, \(statistics.heartRateLogRequests) heart-rate log requests, \(statistics.stepsRequests) steps requests, "
            + "\(statistics.notificationsSent) notifications sent")
        if let clock = await ring.clock {
            let time = clock.secondOfDay
            session.say(String(format: "the ring's clock was last set to %04d-%02d-%02d %02d:%02d:%02d", clock.date.year, clock.date.month, clock.date.day,
                               time / 3600, time / 60 % 60, time % 60))
        }
        session.say("stopped")
    }
}

/// `--steps-truth`: `{"day": "YYYY-MM-DD", "quarters": [{"quarter", "steps", "calories", "distanceMeters"}, …]}`.
struct StepsTruth: Encodable {
    struct Quarter: Encodable { var quarter, steps, calories, distanceMeters: Int }
    var day: String
    var quarters: [Quarter]

    init(_ quarters: [SimulatedSteps], of day: RingDate) {
        self.day = day.description
        self.quarters = quarters.map { .init(quarter: $0.quarter, steps: $0.steps, calories: $0.calories, distanceMeters: $0.distanceMeters) }
    }
}

/// `--fault KIND[:N]` of the simulated ring, each once, to the next answer it concerns.
enum RingFaults {
    static let kinds = "wrong-checksum:COMMAND (a byte, 3 or 0x03), drop-log-packet:N (0…23), wrong-crc, truncated-sleep, sleep-day-overrun"

    static func parse(_ text: String) throws(SimulateSettingsError) -> SimulatedRing.Fault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("wrong-crc", 1): return .wrongCRC
        case ("truncated-sleep", 1): return .truncatedBigData
        case ("sleep-day-overrun", 1): return .sleepDayOverrun
        case ("wrong-checksum", 2):
            let digits = parts[1].lowercased()
            let value = digits.hasPrefix("0x") ? UInt8(digits.dropFirst(2), radix: 16) : UInt8(digits)
            guard let value else { throw SimulateSettingsError("--fault wrong-checksum needs a command byte (3 or 0x03); got \"\(parts[1])\"") }
            return .wrongChecksum(command: value)
        case ("drop-log-packet", 2):
            guard let index = Int(parts[1]), (0...23).contains(index) else {
                throw SimulateSettingsError("--fault drop-log-packet needs a packet index 0…23 (a day's log is 24 packets); got \"\(parts[1])\"")
            }
            return .dropLogPacket(index: index)
        default:
            throw SimulateSettingsError("--fault \"\(text)\" is not a fault; use \(kinds)")
        }
    }
}
