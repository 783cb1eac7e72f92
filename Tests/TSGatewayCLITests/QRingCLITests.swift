import Foundation
import TSTestSupport
import Testing

/// The CLI with the simulated QRing ring (`--simulate --dialect qring`).
@Suite struct QRingCLITests {
    /// A fixed clock for the simulated ring, so its week of nights is the same on every run.
    static let environment = ["TSGATEWAY_SIMULATOR_NOW": "2025-11-03T08:00:00Z"]

    @Test func infoDescribesTheSimulatedRing() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["info", "--json", "--simulate", "--dialect", "qring"], environment: Self.environment)
        #expect(result.status == 0, "stderr \(result.stderr)")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(info["dialect"] as? String == "qring")
        #expect(info["model"] as? String == "R02_5A1C")
        #expect(info["firmware"] as? String == "R02_3.00.06_240523")
        #expect((info["deviceInformation"] as? [String: Any])?["hardwareRevision"] as? String == "R02_V3.0")
        #expect(info["capabilities"] is [String: Any] && (info["capabilities"] as? [String: Any])?["alarms"] == nil, "a ring has no alarm table")
        #expect((info["battery"] as? [String: Any])?["level"] as? Int == 64)
    }

    /// On the real clock: `--since 7d` counts back from it, and the gateway sets the ring's clock to it.
    @Test func sleepSyncStoresTheWeekAndItsHeartRateOnce() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let first = try await cli.runDetached(["sleep", "sync", "--since", "7d", "--json", "--simulate", "--dialect", "qring"])
        #expect(first.status == 0, "stderr \(first.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let stored = try #require(report["stored"] as? Int)
        #expect(stored > 30, "a week of nights: \(first.stdout)")
        #expect(report["fetched"] as? Int == stored)
        #expect(report["heartRateStored"] as? Int ?? 0 > 7 * 280, "a reading every five minutes: \(first.stdout)")
        let again = try await cli.runDetached(["sleep", "sync", "--since", "7d", "--json", "--simulate", "--dialect", "qring"])
        #expect(again.status == 0, "stderr \(again.stderr)")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(second["stored"] as? Int == 0)
        // The ring lives on the real clock: a five-minute mark passed between the runs brings one new reading.
        #expect((second["heartRateStored"] as? Int).map { (0...1).contains($0) } == true, "\(again.stdout)")
    }

    @Test func monitorGetShowsTheHeartRateLogAndTheSwitches() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["monitor", "get", "--simulate", "--dialect", "qring"], environment: Self.environment)
        #expect(result.status == 0, "stderr \(result.stderr)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first { $0.first == "heartRate" }?.prefix(5) == ["heartRate", "yes", "00:00-24:00", "5", "min"])
        #expect(rows.first { $0.first == "spo2" }?.prefix(2) == ["spo2", "yes"])
        #expect(rows.first { $0.first == "stress" }?.prefix(2) == ["stress", "no"])
        #expect(!result.stdout.contains("temperature"))
    }

    @Test func aWindowTheRingCannotHoldIsInvalidInput() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["monitor", "set", "spo2", "--window", "08:00-20:00", "--simulate", "--dialect", "qring"], environment: Self.environment)
        #expect(result.status == 65, "stdout \(result.stdout) stderr \(result.stderr)")
        #expect(result.stderr.contains("00:00–24:00"))
    }

    @Test func alarmsSayTheRingHasNone() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        for arguments in [["alarms", "get"], ["alarms", "set", "07:00"]] {
            let result = try await cli.runDetached(arguments + ["--simulate", "--dialect", "qring"], environment: Self.environment)
            #expect(result.status == 79, "\(arguments): stdout \(result.stdout) stderr \(result.stderr)")
            #expect(result.stderr.contains("alarms"))
        }
    }

    @Test func hrWatchPrintsTheRealTimeMeasurement() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["hr", "watch", "--count", "2", "--json", "--simulate", "--dialect", "qring"], environment: Self.environment)
        #expect(result.status == 0, "stderr \(result.stderr)")
        let bpms = result.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["bpm"] as? Int
        }
        #expect(bpms == [67, 74])
    }

    @Test func simulateTellsABadRingFaultOrOptionBeforeTouchingBluetooth() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let cases: [([String], String)] = [
            (["--dialect", "qring", "--ring-fault", "melt"], "\"melt\" is not a fault; use wrong-checksum:COMMAND"),
            (["--dialect", "qring", "--ring-fault", "drop-log-packet:24"], "packet index 0…23"),
            (["--dialect", "qring", "--ring-fault", "wrong-checksum:0xZZ"], "needs a command byte"),
            (["--dialect", "qring", "--live-stage-interval", "5"], "--live-stage-interval is for --dialect v1, not --dialect qring"),
            // --sleep-fault and --ring-fault are names of --fault: the ring's own faults decide.
            (["--dialect", "qring", "--sleep-fault", "drop-day:1"], "--fault \"drop-day:1\" is not a fault; use wrong-checksum:COMMAND"),
            (["--ring-fault", "wrong-crc"], "--fault is for --dialect npk or --dialect qring or --dialect huami or --dialect garmin, not --dialect v1"),
            (["--dialect", "npk", "--heart-rate-truth", "hr.json"], "--heart-rate-truth is for --dialect qring or --dialect huami or --dialect garmin, not --dialect npk"),
            (["--steps-truth", "steps.json"], "--steps-truth is for --dialect qring, not --dialect v1"),
        ]
        for (arguments, message) in cases {
            // No D-Bus address reaches a bluetoothd: a run that got past validation would fail otherwise (69), not 64.
            let result = try await cli.runDetached(["simulate", "--adapter", "hci1"] + arguments, environment: ["TSGATEWAY_DBUS_ADDRESS": "unix:path=/nonexistent"])
            #expect(result.status == 64, "\(arguments): stdout \(result.stdout) stderr \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): stderr \(result.stderr)")
        }
    }
}
