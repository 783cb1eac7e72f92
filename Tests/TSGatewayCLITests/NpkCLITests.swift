import Foundation
import TSModels
import TSSimulatedHistory
import TSSimulator
import TSStore
import TSTestSupport
import Testing

/// The CLI with the simulated TopStep watch speaking NPK (`--simulate --dialect npk`).
@Suite struct NpkCLITests {
    @Test func infoDescribesTheSimulatedNpkWatch() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let info = try #require(try await cli.json(["info", "--json", "--simulate", "--dialect", "npk"]) as? [String: Any])
        #expect(info["dialect"] as? String == "npk")
        #expect(info["model"] as? String == "NPK Simulator")
        #expect(info["firmware"] as? String == "1.0.0-sim")
        #expect(((info["capabilities"] as? [String: Any])?["alarms"] as? [String: Any])?["maxCount"] as? Int == 8)
        #expect((info["battery"] as? [String: Any])?["level"] as? Int == 76)
    }

    @Test func alarmsGetListsTheWatchsAlarmWithoutSnooze() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["alarms", "get", "--simulate", "--dialect", "npk"])
        #expect(result.status == 0, "stderr \(result.stderr)")
        #expect(result.stdout.contains("06:45"))
        #expect(result.stdout.contains("Work"))
    }

    /// README lets connection options come first; `--dialect` is one of them (it was not: the
    /// root command then refused "--simulate", the wrong option).
    @Test func connectionOptionsBeforeTheCommandIncludeTheDialect() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let info = try #require(try await cli.json(["--simulate", "--dialect", "npk", "info", "--json"]) as? [String: Any])
        #expect(info["dialect"] as? String == "npk")
        let unknown = try await cli.runDetached(["--simulate", "--bogus", "info"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--bogus"), "the error names the option it does not know: \(unknown.stderr)")
        #expect(!unknown.stderr.contains("'--simulate'"), "stderr \(unknown.stderr)")
    }

    /// The simulated NPK watch remembers its alarms between runs, as the v1 one does.
    @Test func theSimulatedNpkWatchRemembersItsAlarmsBetweenRuns() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let set = try await cli.runDetached(["alarms", "set", "07:00", "--label", "Früh", "--simulate", "--dialect", "npk"])
        #expect(set.status == 0, "stderr \(set.stderr)")
        let got = try await cli.runDetached(["alarms", "get", "--simulate", "--dialect", "npk"])
        #expect(got.status == 0, "stderr \(got.stderr)")
        #expect(got.stdout.contains("07:00"), "stdout \(got.stdout)")
        #expect(got.stdout.contains("Früh"), "stdout \(got.stdout)")
        #expect(!got.stdout.contains("06:45"), "the table set replaced the default: \(got.stdout)")
    }

    @Test func simulateTellsABadNpkFaultOrOptionBeforeTouchingBluetooth() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let bogus = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "npk", "--sleep-fault", "melt-day:3"])
        #expect(bogus.status == 64)
        #expect(bogus.stderr.contains("\"melt-day\" is not a fault; use corrupt-day, drop-day, swap-days or lose-link-after-days"), "stderr \(bogus.stderr)")
        let noCount = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "npk", "--sleep-fault", "corrupt-day"])
        #expect(noCount.status == 64)
        #expect(noCount.stderr.contains("KIND:N"), "stderr \(noCount.stderr)")
        let v1Option = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "npk", "--live-stage-interval", "5"])
        #expect(v1Option.status == 64)
        #expect(v1Option.stderr.contains("--live-stage-interval is for --dialect v1, not --dialect npk"), "stderr \(v1Option.stderr)")
        let npkOption = try await cli.runDetached(["simulate", "--adapter", "hci1", "--sleep-fault", "drop-day:1"])
        #expect(npkOption.status == 64)
        #expect(npkOption.stderr.contains("--fault is for --dialect npk or --dialect qring or --dialect huami or --dialect garmin, not --dialect v1"), "stderr \(npkOption.stderr)")
        let standard = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "standard"])
        #expect(standard.status == 64)
        #expect(standard.stderr.contains("--dialect standard has no simulated peripheral; `simulate` runs v1, npk, qring"), "stderr \(standard.stderr)")
    }
}

/// `sleep sync` with the simulated NPK watch brings the heart rate it measured on its own.
@Suite struct NpkHeartRateCLITests {
    static let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-21T08:00:00Z"]
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    /// The readings the simulated watch holds (the CLI's seed, 90 days, Berlin) in [from, to).
    static func truth(from: Int64, to: Int64) -> [HeartRateSample] {
        let now = Date(timeIntervalSince1970: 1_795_248_000)
        let records = SleepDataGenerator(seed: 20_251_119, timeZone: zone).records(days: 90, lastMorning: now, notAfter: now)
        let end = Int64(now.timeIntervalSince1970)
        return HeartRateHistoryGenerator(seed: 20_251_119).samples(start: end - 90 * 86_400, end: end, records: records)
            .filter { (from..<to).contains(Int64($0.time.timeIntervalSince1970)) }
    }

    @Test func sleepSyncStoresTheWatchsHeartRateAndTheNightShowsIt() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        // 2026-11-18 00:00 to 2026-11-21 00:00 in Berlin.
        let from: Int64 = 1_795_215_600 - 3 * 86_400, to: Int64 = 1_795_215_600
        let truth = Self.truth(from: from, to: to)
        #expect(truth.count > 3 * 270)
        let sync = ["sleep", "sync", "--from", "2026-11-18", "--to", "2026-11-20", "--json", "--simulate", "--dialect", "npk"]
        let first = try #require(try await cli.json(sync, environment: Self.pinned) as? [String: Any])
        #expect(first["heartRateFetched"] as? Int == truth.count, "\(first)")
        #expect(first["heartRateStored"] as? Int == truth.count, "\(first)")
        let store = try GatewayStore(path: HeartRateCLITests.defaultDatabase(cli))
        #expect(try await store.heartRate(watch: WatchID("00:00:5E:00:53:01")!) == truth, "stored as the watch measured them")

        let again = try #require(try await cli.json(sync, environment: Self.pinned) as? [String: Any])
        // The second sync resumes the stored range: the history of its last day and a half again, nothing new.
        let fetchedAgain = try #require(again["heartRateFetched"] as? Int)
        #expect(fetchedAgain > 0 && fetchedAgain < truth.count, "\(again)")
        #expect(again["heartRateStored"] as? Int == 0)
        let text = try await cli.runDetached(sync.filter { $0 != "--json" }, environment: Self.pinned)
        #expect(text.stdout.contains("heart-rate samples from the watch's history (0 new)"), "\(text.summary)")

        let show = ["sleep", "show", "--date", "2026-11-20", "--no-chart", "--json", "--simulate", "--tz", "Europe/Berlin"]
        let report = try #require(try await cli.json(show, environment: Self.pinned) as? [String: Any])
        let night = try #require(((report["days"] as? [[String: Any]])?.first?["nightSleeps"] as? [[String: Any]])?.first)
        let summary = try #require(night["summary"] as? [String: Any])
        let start = try #require(summary["start"] as? Int), end = try #require(summary["end"] as? Int)
        let expected = try #require(HeartRateSummary(truth.filter { (Int64(start)..<Int64(end)).contains(Int64($0.time.timeIntervalSince1970)) }))
        let heartRate = try #require(night["heartRate"] as? [String: Any], "\(night)")
        #expect(heartRate["minimum"] as? Int == expected.minimum && heartRate["maximum"] as? Int == expected.maximum
                && heartRate["average"] as? Double == expected.average && heartRate["samples"] as? Int == expected.samples, "\(heartRate)")
    }
}

/// Pairing an NPK watch: what the CLI says when the wearer does not confirm, and bad pairing input.
@Suite struct NpkPairingCLITests {
    @Test(arguments: [("decline", Int32(77), "the wearer declined the pairing on the watch; pair again and accept it there"),
                      ("ignore", 75, "nobody confirmed the pairing on the watch in time; pair again and confirm it on the watch"),
                      ("shrug", 64, "TSGATEWAY_SIMULATOR_WEARER=shrug is not what the simulated wearer can do; use confirm, decline, ignore")])
    func aBindTheWearerDoesNotConfirmSaysWhatToDo(wearer: String, status: Int32, message: String) async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        // The simulated watch is bound to nobody: its login is refused and the gateway binds.
        let result = try await cli.runDetached(["info", "--simulate", "--dialect", "npk"], environment: ["TSGATEWAY_SIMULATOR_WEARER": wearer])
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [(["pair", "AA:BB:CC:DD:EE:09", "--auth-code", "123456"], "--auth-code is for a TopStep NPK watch; add --dialect npk"),
                      (["pair", "AA:BB:CC:DD:EE:09", "--dialect", "npk", "--auth-code", "12 34"], "--auth-code: the auth code holds a space"),
                      (["pair", "AA:BB:CC:DD:EE:09", "--dialect", "npk", "--auth-code", ""], "--auth-code: the auth code is empty")])
    func badPairingInputIsAUsageError(arguments: [String], message: String) async throws {
        let result = try await CLI.runOnceDetached(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
