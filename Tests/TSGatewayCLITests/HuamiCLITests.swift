import Foundation
import TSTestSupport
import TSTransport
import Testing

/// The CLI with the simulated Huami band (`--simulate --dialect huami`), on a fresh data directory each.
@Suite struct HuamiCLITests {
    /// A fixed clock for the simulated band, so its nights are the same on every run.
    static let environment = ["TSGATEWAY_SIMULATOR_NOW": "2025-11-03T08:00:00Z"]
    /// The simulated band's auth key, which must never be printed.
    static let key = "00112233445566778899aabbccddeeff"

    @Test func infoDescribesTheSimulatedBandWithoutItsKey() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["--simulate", "--dialect", "huami", "info", "--json", "-vv"], environment: Self.environment)
        #expect(result.status == 0, "stderr \(result.stderr)")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(info["dialect"] as? String == "huami")
        // -v: what was written, what arrived and which waiting request took it.
        #expect(result.stderr.contains("watch: writing 82 00 02 01 00 to auth (00000009) for the auth challenge"), "\(result.stderr)")
        #expect(result.stderr.contains("watch: auth notification 10 82 01") && result.stderr.contains("→ the auth challenge"), "\(result.stderr)")
        #expect(result.stderr.contains("watch: auth notification 10 83 01 → the auth answer"), "\(result.stderr)")
        #expect(info["model"] as? String == "Mi Smart Band 5")
        #expect(((info["capabilities"] as? [String: Any])?["alarms"] as? [String: Any])?["maxCount"] as? Int == 10)
        #expect(((info["capabilities"] as? [String: Any])?["alarms"] as? [String: Any])?["labelMaxBytes"] as? Int == 0)
        #expect((info["battery"] as? [String: Any])?["level"] as? Int == 71)
        #expect(!result.stdout.lowercased().contains(Self.key) && !result.stderr.lowercased().contains(Self.key), "the key is never printed or logged")
        let text = try await cli.runDetached(["info", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(text.status == 0, "stderr \(text.stderr)")
        #expect(!text.stdout.lowercased().contains(Self.key))
    }

    @Test func infoSaysTheBandsAlarmsTakeNoLabels() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let text = try await cli.runDetached(["info", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(text.status == 0, "stderr \(text.stderr)")
        let alarms = text.stdout.split(separator: "\n").first { $0.hasPrefix("alarms") }.map(String.init) ?? ""
        #expect(alarms.contains("up to 10, no labels"), "\(text.stdout)")
        #expect(!alarms.contains("≤ 0 bytes"), "\(alarms)")
    }

    /// `serve --check` refuses a band configured without `auth-key:` when `pair` kept none beside
    /// the service's database either, and says what to add; with either it passes.
    @Test func serveCheckRefusesABandWithoutItsAuthKey() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let database = cli.home.appendingPathComponent("service/tsgateway.sqlite").path
        let config = cli.home.appendingPathComponent("serve.yaml")
        let band = "database: \(database)\nwatches:\n  - address: AA:BB:CC:DD:EE:07\n    name: wrist\n    dialect: huami\n"
        try Data(band.utf8).write(to: config)
        let refused = try await cli.runDetached(["serve", "--config", config.path, "--check"])
        #expect(refused.exited(78), "\(refused.summary)")
        #expect(refused.stderr.contains("watch AA:BB:CC:DD:EE:07 (wrist): a Huami band"), "\(refused.stderr)")
        #expect(refused.stderr.contains("add `auth-key: …` under it"), "\(refused.stderr)")
        #expect(refused.stderr.contains("tsgateway pair AA:BB:CC:DD:EE:07 --dialect huami --auth-key … --db \(database)"), "\(refused.stderr)")

        try Data((band + "    auth-key: \"\(Self.key)\"\n").utf8).write(to: config)
        let configured = try await cli.runDetached(["serve", "--config", config.path, "--check"])
        #expect(configured.exited(0), "\(configured.summary)")
        #expect(!configured.stdout.contains(Self.key))

        // The key `pair --db` keeps beside the service's database.
        try Data(band.utf8).write(to: config)
        let secrets = cli.home.appendingPathComponent("service/pairing-secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(Self.key.utf8).write(to: secrets.appendingPathComponent("AABBCCDDEE07.auth-key"))
        let remembered = try await cli.runDetached(["serve", "--config", config.path, "--check"])
        #expect(remembered.exited(0), "\(remembered.summary)")
    }

    @Test func alarmsGetSetAndALabelRefused() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let get = try await cli.runDetached(["--simulate", "--dialect", "huami", "alarms", "get", "--json"], environment: Self.environment)
        #expect(get.status == 0, "stderr \(get.stderr)")
        #expect(get.stdout.contains("\"time\" : \"06:45\""), "the simulated watch's 06:45, without its label: \(get.stdout)")
        let labelled = try await cli.runDetached(["alarms", "set", "07:00", "--label", "Früh", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(labelled.status == 79, "stdout \(labelled.stdout) stderr \(labelled.stderr)")
        #expect(labelled.stderr.contains("label"), "\(labelled.stderr)")
        let set = try await cli.runDetached(["alarms", "set", "07:15", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(set.status == 0, "stdout \(set.stdout) stderr \(set.stderr)")
        let again = try await cli.runDetached(["alarms", "get", "--json", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(again.stdout.contains("\"time\" : \"07:15\""), "the band remembers between runs: \(again.stdout)")
    }

    /// On the real clock: `--since 7d` counts back from it, and the simulated band records up to it.
    @Test func sleepSyncStoresTheWeekOnce() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let first = try await cli.runDetached(["--simulate", "--dialect", "huami", "sleep", "sync", "--since", "7d", "--json"])
        #expect(first.status == 0, "stderr \(first.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let stored = try #require(report["stored"] as? Int)
        #expect(stored > 30, "a week of nights: \(first.stdout)")
        #expect(report["fetched"] as? Int == stored)
        #expect(report["heartRateStored"] as? Int ?? 0 > 7 * 100, "\(first.stdout)")
        let again = try await cli.runDetached(["--simulate", "--dialect", "huami", "sleep", "sync", "--since", "7d", "--json"])
        #expect(again.status == 0, "stderr \(again.stderr)")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        // The band lives on the real clock: a minute passed between the runs may bring one new record or reading.
        #expect((second["stored"] as? Int).map { (0...1).contains($0) } == true, "\(again.stdout)")
        #expect((second["heartRateStored"] as? Int).map { (0...1).contains($0) } == true, "\(again.stdout)")
        let show = try await cli.runDetached(["sleep", "show"])
        #expect(show.status == 0, "stderr \(show.stderr)")
    }

    @Test func monitorSetReachesTheBand() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let set = try await cli.runDetached(["monitor", "set", "heart-rate", "--enable", "--interval", "15", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(set.status == 0, "stdout \(set.stdout) stderr \(set.stderr)")
        let window = try await cli.runDetached(["monitor", "set", "heart-rate", "--window", "08:00-20:00", "--simulate", "--dialect", "huami"], environment: Self.environment)
        #expect(window.status == 79, "stdout \(window.stdout) stderr \(window.stderr)")
    }

    /// `-v` before the subcommand or after it: pair takes it (it was refused as an unknown option);
    /// the malformed key is then what it refuses, before Bluetooth is touched.
    @Test func pairTakesVerboseBeforeOrAfterIt() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        for arguments in [["-v", "pair", "AA:BB:CC:DD:EE:FF", "--dialect", "huami", "--auth-key", "0011"],
                          ["pair", "AA:BB:CC:DD:EE:FF", "--dialect", "huami", "--auth-key", "0011", "-v"],
                          ["pair", "AA:BB:CC:DD:EE:FF", "-vv", "--dialect", "huami", "--auth-key", "0011"]] {
            let result = try await cli.runDetached(arguments)
            #expect(result.status == 64, "\(arguments): stdout \(result.stdout) stderr \(result.stderr)")
            #expect(!result.stderr.contains("Unknown option"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("32 hex digits"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func simulateTakesAnAnswerTimingForEveryDialectAndRefusesOtherWords() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        for dialect in ["v1", "npk", "qring", "huami"] {
            let unknown = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", dialect, "--answer-timing", "slow"])
            #expect(unknown.status == 64, "\(dialect): stdout \(unknown.stdout) stderr \(unknown.stderr)")
            #expect(unknown.stderr.contains("immediate, before-response, late, late:MS"), "\(dialect): \(unknown.stderr)")
            #expect(!unknown.stderr.contains("is for --dialect"), "every dialect takes --answer-timing: \(unknown.stderr)")
            let tooLate = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", dialect, "--answer-timing", "late:90000"])
            #expect(tooLate.status == 64, "\(dialect): stdout \(tooLate.stdout) stderr \(tooLate.stderr)")
            #expect(tooLate.stderr.contains("0 … 60000 milliseconds"), "\(dialect): \(tooLate.stderr)")
        }
    }

    @Test func pairRefusesAMalformedOrMisplacedKeyBeforeTouchingBluetooth() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let short = try await cli.runDetached(["pair", "AA:BB:CC:DD:EE:FF", "--dialect", "huami", "--auth-key", "0011"])
        #expect(short.status == 64, "stdout \(short.stdout) stderr \(short.stderr)")
        #expect(short.stderr.contains("auth-key") && short.stderr.contains("32 hex digits"), "\(short.stderr)")
        let misplaced = try await cli.runDetached(["pair", "AA:BB:CC:DD:EE:FF", "--auth-key", Self.key])
        #expect(misplaced.status == 64, "stdout \(misplaced.stdout) stderr \(misplaced.stderr)")
        #expect(misplaced.stderr.contains("--dialect huami"), "\(misplaced.stderr)")
        #expect(!misplaced.stderr.contains(Self.key))
    }
}
