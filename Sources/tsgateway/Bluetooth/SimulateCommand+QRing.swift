import ArgumentParser
import Foundation
import TSBlueZ
import TSModels
import TSQRing
import TSQRingSimulator
import TSSimulatorPeripheral

/// `tsgateway simulate --dialect qring`: the in-process simulated ring (the same nights and
/// heart-rate log for the same seed, days and clock as `--simulate --dialect qring`) behind BlueZ,
/// with both of the ring's pairs and Device Information.
extension SimulateCommand {
    func runRing() async throws {
        try await withBlueZ { bluez in
            var found = try await bluez.adapter(adapter)
            if !found.powered {
                try await bluez.setPowered(true, adapter: found)
                found = try await bluez.adapter(adapter)
                print("powered on \(found.name)")
            }
            let now = simulatorNow()
            let history = RingHistory(seed: seed, timeZone: .current, now: now, days: days)
            let ring = SimulatedRing(history: history)
            let records = history.nights.flatMap(\.items)
            if let groundTruth { try Self.write(records, to: groundTruth) }
            if let heartRateTruth {
                let start = Int64(now.timeIntervalSince1970) - Int64(days + 1) * 86_400
                try Self.write(await ring.heartRateSamples(in: start..<Int64(now.timeIntervalSince1970) + 1), to: heartRateTruth)
            }
            if let stepsTruth { try Self.write(steps: history.steps(day: history.today), of: history.today, to: stepsTruth) }
            for fault in ringFault { await ring.inject(fault) }
            let peripheral = QRingSimulatorPeripheral(bluez: bluez, ring: ring, adapter: found)
            peripheral.report = { line in print(line); fflush(nil) }
            try await peripheral.start()
            print("simulated ring \(ring.configuration.name) advertising on \(found.name) (\(found.address)), service \(QRingGATT.commandService), dialect \(Dialect.qring), "
                + "with \(history.nights.count) nights (\(records.count) sleep records); \(ringFault.count) faults queued; Ctrl-C stops it, SIGUSR1 advertises anew")
            fflush(nil)
            // A central that starts scanning after the advertisement began may never get a report
            // (btvirt reports an advertisement once, as scanning starts): SIGUSR1 starts it anew.
            let readvertise = Self.onSignal(SIGUSR1) {
                do {
                    try await peripheral.advertiseAgain()
                    print("advertising anew"); fflush(nil)
                } catch {
                    print("advertising anew failed: \(error)"); fflush(nil)
                }
            }
            await Self.waitForStop(duration: duration)
            readvertise.cancel()
            await peripheral.stop()
            let statistics = await ring.statistics
            print("\(statistics.connections) connections: \(statistics.packetsReceived) packets received (\(statistics.packetsRefused) refused), "
                + "\(statistics.sleepRequests) sleep requests, \(statistics.heartRateLogRequests) heart-rate log requests, \(statistics.stepsRequests) steps requests, "
                + "\(statistics.notificationsSent) notifications sent")
            if let clock = await ring.clock {
                let time = clock.secondOfDay
                print(String(format: "the ring's clock was last set to %04d-%02d-%02d %02d:%02d:%02d", clock.date.year, clock.date.month, clock.date.day,
                             time / 3600, time / 60 % 60, time % 60))
            }
            print("stopped")
        }
    }

    static func write(_ samples: [HeartRateSample], to path: String) throws {
        let rows = samples.map { ["time": Int64($0.time.timeIntervalSince1970), "bpm": Int64($0.bpm)] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFile.write(try encoder.encode(rows), to: path)
    }
}

extension SimulateCommand {
    /// `--steps-truth`: `{"day": "YYYY-MM-DD", "quarters": [{"quarter", "steps", "calories", "distanceMeters"}, …]}`.
    static func write(steps quarters: [SimulatedSteps], of day: RingDate, to path: String) throws {
        struct Truth: Encodable {
            struct Quarter: Encodable { var quarter, steps, calories, distanceMeters: Int }
            var day: String
            var quarters: [Quarter]
        }
        let truth = Truth(day: day.description, quarters: quarters.map { .init(quarter: $0.quarter, steps: $0.steps, calories: $0.calories, distanceMeters: $0.distanceMeters) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFile.write(try encoder.encode(truth), to: path)
    }
}

/// `--ring-fault KIND[:N]`.
enum RingFaultChoice {
    static let kinds = "wrong-checksum:COMMAND (a byte, 3 or 0x03), drop-log-packet:N (0…23), wrong-crc, truncated-sleep, sleep-day-overrun"

    static func parse(_ text: String) throws -> SimulatedRing.Fault {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts[0], parts.count) {
        case ("wrong-crc", 1): return .wrongCRC
        case ("truncated-sleep", 1): return .truncatedBigData
        case ("sleep-day-overrun", 1): return .sleepDayOverrun
        case ("wrong-checksum", 2):
            let digits = parts[1].lowercased()
            let value = digits.hasPrefix("0x") ? UInt8(digits.dropFirst(2), radix: 16) : UInt8(digits)
            guard let value else { throw ValidationError("--ring-fault wrong-checksum needs a command byte (3 or 0x03); got \"\(parts[1])\"") }
            return .wrongChecksum(command: value)
        case ("drop-log-packet", 2):
            guard let index = Int(parts[1]), (0...23).contains(index) else {
                throw ValidationError("--ring-fault drop-log-packet needs a packet index 0…23 (a day's log is 24 packets); got \"\(parts[1])\"")
            }
            return .dropLogPacket(index: index)
        default:
            throw ValidationError("--ring-fault \"\(text)\" is not a fault; use \(kinds)")
        }
    }
}
