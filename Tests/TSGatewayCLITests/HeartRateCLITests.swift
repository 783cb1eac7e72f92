import TSTestSupport
import Foundation
import Testing
import TSModels
import TSStore

/// `tsgateway hr history` and the heart rate in `sleep show`, on databases the test seeds
/// through `GatewayStore` as `tsgateway serve` fills them.
@Suite struct HeartRateCLITests {
    /// Where `tsgateway` keeps its database in `cli`'s data directory.
    static func defaultDatabase(_ cli: CLI) -> String { cli.home.appendingPathComponent("tsgateway/tsgateway.sqlite").path }

    @Test func historyPrintsTheStoredSamplesOfARangeInLocalTimeWithTheirSummary() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        try await HeartRateSeed.storeExampleSamples(at: Self.defaultDatabase(cli))
        // 22:00 Berlin is the seed's first sample; --to is exclusive.
        let result = try await cli.runDetached(["hr", "history", "--from", "2026-11-20T22:00", "--to", "2026-11-20T22:03"])
        #expect(result.exited(0), "\(result.summary)")
        #expect(result.stdout == """
            2026-11-20 22:00:00  50 bpm, contact, RR 1199 ms
            2026-11-20 22:01:00  51 bpm
            2026-11-20 22:02:00  52 bpm
            3 samples of AA:BB:CC:DD:EE:FF: 50–52 bpm, average 51.0

            """)

        // The same instants written in UTC; a whole local day with dates only.
        let utc = try await cli.runDetached(["hr", "history", "--from", "2026-11-20T21:00Z", "--to", "2026-11-20T21:02:00+00:00"])
        #expect(utc.stdout.split(separator: "\n").count == 3, "two samples and the summary: \(utc.summary)")
        let day = try await cli.runDetached(["hr", "history", "--from", "2026-11-20", "--to", "2026-11-20"])
        #expect(day.stdout.hasSuffix("120 samples of AA:BB:CC:DD:EE:FF: 50–69 bpm, average 59.5\n"), "22:00 to midnight, a sample a minute: \(day.summary)")
    }

    @Test func historyJSONHasTheShapeOfHrWatch() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        try await HeartRateSeed.storeExampleSamples(at: Self.defaultDatabase(cli))
        let result = try await cli.runDetached(["hr", "history", "--from", "2026-11-20T22:00", "--to", "2026-11-20T22:02", "--json"])
        #expect(result.exited(0), "\(result.summary)")
        let lines = try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.count == 2)
        #expect(Set(lines[0].keys) == ["type", "watch", "time", "bpm", "sensorContact", "rrIntervals"])
        #expect(lines[0]["type"] as? String == "heartRate", "the heartRate event's shape, as `hr watch --json` and `tsgateway events` print it")
        #expect(lines[0]["watch"] as? String == HeartRateSeed.watch.rawValue)
        #expect(lines[0]["time"] as? String == "2026-11-20T21:00:00Z")
        #expect(lines[0]["bpm"] as? Int == 50)
        #expect(lines[0]["sensorContact"] as? String == "detected")
        #expect(lines[0]["rrIntervals"] as? [Int] == [1228])
        #expect(lines[1]["time"] as? String == "2026-11-20T21:01:00Z")
        #expect(lines[1]["sensorContact"] as? String == "not-supported")
        #expect(lines[1]["rrIntervals"] as? [Int] == [])

        // Nothing in the range: no lines and success in JSON, exit 1 with a hint as text.
        let none = try await cli.runDetached(["hr", "history", "--from", "2026-11-19", "--to", "2026-11-19", "--json"])
        #expect(none.exited(0) && none.stdout.isEmpty, "\(none.summary)")
        let noneText = try await cli.runDetached(["hr", "history", "--from", "2026-11-19", "--to", "2026-11-19"])
        #expect(noneText.status == 1 && noneText.stderr.contains("no heart-rate samples of AA:BB:CC:DD:EE:FF from 2026-11-19 00:00:00 to 2026-11-20 00:00:00"),
                "\(noneText.summary)")
    }

    @Test func historyChoosesTheWatchAndTheDatabase() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let elsewhere = cli.home.appendingPathComponent("daemon/tsgateway.sqlite").path
        try await HeartRateSeed.storeExampleSamples(at: elsewhere)
        let range = ["--from", "2026-11-20T22:00", "--to", "2026-11-20T22:01"]

        let noDatabase = try await cli.runDetached(["hr", "history"] + range)
        #expect(noDatabase.status == 66 && noDatabase.stderr.contains("no database at \(Self.defaultDatabase(cli))"), "\(noDatabase.summary)")
        #expect(try await cli.runDetached(["hr", "history", "--db", elsewhere] + range).stdout.hasPrefix("2026-11-20 22:00:00  50 bpm"))
        let configuration = cli.home.appendingPathComponent("config.yaml")
        try Data("database: \(elsewhere)\nwatches:\n  - address: AA:BB:CC:DD:EE:FF\n".utf8).write(to: configuration)
        let configured = try await cli.runDetached(["hr", "history", "--config", configuration.path, "--json"] + range)
        #expect(configured.exited(0) && configured.stdout.split(separator: "\n").count == 1, "\(configured.summary)")

        // A second watch: without --device the choice is the user's.
        let store = try GatewayStore(path: elsewhere)
        try await store.storeHeartRate([HeartRateSample(time: HeartRateSeed.nightStart, bpm: 77)], watch: WatchID("11:22:33:44:55:66")!)
        let ambiguous = try await cli.runDetached(["hr", "history", "--db", elsewhere] + range)
        #expect(ambiguous.status == 80 && ambiguous.stderr.contains("choose one with --device"), "\(ambiguous.summary)")
        let other = try await cli.runDetached(["hr", "history", "--db", elsewhere, "--device", "11:22:33:44:55:66"] + range)
        #expect(other.stdout == "2026-11-20 22:00:00  77 bpm\n1 sample of 11:22:33:44:55:66: 77–77 bpm, average 77.0\n", "\(other.summary)")
        let unknown = try await cli.runDetached(["hr", "history", "--db", elsewhere, "--device", "AA:AA:AA:AA:AA:AA"] + range)
        #expect(unknown.status == 80 && unknown.stderr.contains("has nothing of \"AA:AA:AA:AA:AA:AA\""), "\(unknown.summary)")
    }

    @Test("hr history refuses bad ranges with what was wrong", arguments: [
        (["--since", "12x"], #"--since "12x" is not an age such as 7d, 36h or 2w"#),
        (["--since", "0h"], #"--since "0h" is not an age"#),
        (["--from", "yesterday"], #"--from "yesterday" is not a date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM[:SS]"#),
        (["--from", "2026-02-30"], #"--from "2026-02-30" does not exist"#),
        (["--from", "2026-03-29T02:30"], #"--from "2026-03-29T02:30" does not exist in Europe/Berlin"#),
        (["--from", "2026-11-20T22:00+25:00"], #"--from "2026-11-20T22:00+25:00" is not a date"#),
        (["--from", "2026-11-21", "--to", "2026-11-20T12:00"], "--to 2026-11-20T12:00 is not after --from 2026-11-21"),
        (["--to", "2026-11-20"], "--to needs --from"),
        (["--since", "1d", "--from", "2026-11-20"], "give --since or --from, not both"),
    ])
    func historyRefusesBadRanges(arguments: [String], message: String) async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        try await HeartRateSeed.storeExampleSamples(at: Self.defaultDatabase(cli))
        let result = try await cli.runDetached(["hr", "history"] + arguments)
        #expect(result.status == 64, "\(result.summary)")
        #expect(result.stderr.contains(message), "\(result.summary)")
    }

    @Test func sleepShowPrintsAndEncodesTheHeartRateOfANightWithSamples() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-21T08:00:00Z"]
        #expect(try await cli.runDetached(["sleep", "sync", "--from", "2026-11-18", "--simulate"], environment: pinned).exited(0))
        let show = ["sleep", "show", "--date", "2026-11-20", "--no-chart", "--simulate", "--tz", "Europe/Berlin"]
        let before = try await cli.runDetached(show, environment: pinned)
        #expect(before.exited(0) && !before.stdout.contains("heart rate"), "no samples, no heart-rate line: \(before.summary)")
        let plain = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.runDetached(show + ["--json"], environment: pinned).stdout.utf8)) as? [String: Any])
        let plainNight = try #require(((plain["days"] as? [[String: Any]])?.first?["nightSleeps"] as? [[String: Any]])?.first)
        #expect(plainNight["heartRate"] == nil)
        let summary = try #require(plainNight["summary"] as? [String: Any])
        let start = try #require(summary["start"] as? Int), end = try #require(summary["end"] as? Int)

        // Samples during the night, and one on its end second (outside it), for the simulated watch.
        let store = try GatewayStore(path: Self.defaultDatabase(cli))
        let watch = try #require(try await store.watches().first?.id)
        try await store.storeHeartRate([52, 68, 57, 54].enumerated().map { index, bpm in
            HeartRateSample(time: Date(timeIntervalSince1970: Double(start + 600 * index)), bpm: bpm)
        } + [HeartRateSample(time: Date(timeIntervalSince1970: Double(end)), bpm: 120)], watch: watch)

        let after = try await cli.runDetached(show, environment: pinned)
        #expect(after.exited(0), "\(after.summary)")
        let clock = DateFormatter()
        clock.dateFormat = "HH:mm"
        clock.timeZone = TimeZone(identifier: "Europe/Berlin")
        let from = clock.string(from: Date(timeIntervalSince1970: Double(start))), to = clock.string(from: Date(timeIntervalSince1970: Double(end)))
        #expect(after.stdout.contains("\n  night \(from)–\(to)  heart rate 52–68 bpm, average 57.8 (4 samples)\n"), "\(after.summary)")
        #expect(after.stdout.components(separatedBy: "heart rate").count == 2, "one line, for the one night with samples")

        let report = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.runDetached(show + ["--json"], environment: pinned).stdout.utf8)) as? [String: Any])
        let night = try #require(((report["days"] as? [[String: Any]])?.first?["nightSleeps"] as? [[String: Any]])?.first)
        let heartRate = try #require(night["heartRate"] as? [String: Any])
        #expect(heartRate["minimum"] as? Int == 52 && heartRate["maximum"] as? Int == 68 && heartRate["average"] as? Double == 57.8
                && heartRate["samples"] as? Int == 4, "\(heartRate)")
    }
}
