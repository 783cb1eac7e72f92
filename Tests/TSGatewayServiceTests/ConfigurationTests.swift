import Foundation
import TSFamilies
import TSFamilyKit
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSSimulator
import Testing

@Suite("serve configuration")
struct ConfigurationTests {
    /// Each watch key of the example's list: `#   key  what it does`, and the lines under it.
    static func documentedWatchKeys(_ text: String) -> [String: String] {
        var keys: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#   "), let word = line.dropFirst(4).split(separator: " ").first, line.dropFirst(4).hasPrefix(word + "  ") {
                current = String(word)
                keys[String(word)] = String(line)
            } else if let key = current, line.hasPrefix("#     ") {
                keys[key, default: ""] += "\n" + line
            } else {
                current = nil
            }
        }
        return keys
    }

    @Test("the shipped example names every built-in dialect under `dialect` and documents the secret each takes")
    func exampleDocumentsEveryDialectAndItsSecret() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("udev/config.example.yaml").path
        let keys = Self.documentedWatchKeys(try String(contentsOfFile: path, encoding: .utf8))
        let dialect = try #require(keys["dialect"], "no `#   dialect  …` entry among \(keys.keys.sorted())")
        for family in WatchFamilies.builtIn {
            #expect(dialect.contains(family.dialect.name.rawValue), "`dialect` does not name \(family.dialect.name): \(dialect)")
            if let credential = family.dialect.credential {
                #expect(keys[credential.key] != nil, "no `#   \(credential.key)  …` entry for \(credential.holder)")
            }
        }
    }

    @Test("the shipped example parses, and every key lands where it belongs")
    func example() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("udev/config.example.yaml").path
        let example = try GatewayConfiguration.load(path: path)
        #expect(example.watches.map(\.address) == [WatchID("AA:BB:CC:DD:EE:FF")!])

        let configuration = try GatewayConfiguration.parse("""
            database: /var/lib/x/db.sqlite
            bus: session
            time-zone: Europe/Berlin
            sync-interval: 2h
            time-sync-interval: 12h
            battery-interval: 90s
            first-sync-days: 14
            heart-rate-retention: 7d
            reconnect-min: 500ms
            reconnect-max: 10m
            statistics-rule: 2
            watches:
              - address: aa:bb:cc:dd:ee:01
                name: bedroom
                adapter: hci1
                dialect: Standard
                smart-wake: {0: 30, 3: 0}
              - simulated: true
                name: demo
                seed: 3
                history-days: 5
                packet-delay: 20ms
                pause-after-packets: 40
                resume-file: /tmp/soak/resume
                disconnect-every: 500
                live-stage-interval: 2s
                heart-rate-interval: 250ms
                standard-services: false
                protocol: 1.0
                ground-truth: /tmp/soak/demo.json
            """, file: "c.yaml")
        #expect(configuration.database == "/var/lib/x/db.sqlite")
        #expect(configuration.watches.map(\.dialect) == [.standard, nil], "a dialect named in any case; none: as the GATT services say")
        #expect(configuration.bus == .session)
        #expect(configuration.timeZone.identifier == "Europe/Berlin")
        #expect(configuration.syncInterval == .seconds(7200))
        #expect(configuration.timeSyncInterval == .seconds(43_200))
        #expect(configuration.batteryInterval == .seconds(90))
        #expect(configuration.firstSyncDays == 14)
        #expect(configuration.heartRateRetention == .seconds(7 * 86_400))
        #expect(example.heartRateRetention == .seconds(30 * 86_400))
        #expect(configuration.reconnectMinimum == .milliseconds(500))
        #expect(configuration.reconnectMaximum == .seconds(600))
        #expect(configuration.statisticsRule == .longestNight)
        let real = try #require(configuration.watches.first)
        #expect(real.address == WatchID("AA:BB:CC:DD:EE:01") && real.name == "bedroom" && real.adapter == "hci1" && !real.simulated)
        let simulated = try #require(configuration.watches.last)
        #expect(simulated.simulated && simulated.address == WatchID("00:00:5E:00:54:01") && simulated.seed == 3 && simulated.historyDays == 5)
        #expect(simulated.packetDelay == .milliseconds(20) && simulated.disconnectEvery == 500 && simulated.liveStageInterval == .seconds(2))
        #expect(simulated.heartRateInterval == .milliseconds(250) && !simulated.standardServices)
        #expect(simulated.simulatedProtocol == .version1)
        #expect(simulated.pauseAfterPackets == 40 && simulated.resumeFile == "/tmp/soak/resume" && real.pauseAfterPackets == nil)
        #expect(simulated.groundTruth == "/tmp/soak/demo.json" && real.groundTruth == nil)
        #expect(real.heartRateInterval == .seconds(1) && real.standardServices && real.simulatedProtocol == .version1_1)
        #expect(real.smartWake == [0: 30, 3: 0] && simulated.smartWake == nil)
    }

    @Test("each mistake is reported with its file, line and what to do", arguments: [
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\nsync_interval: 1h", 3, "unknown key \"sync_interval\" in the configuration; did you mean \"sync-interval\"?"),
        ("sync-interval: 1x\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "sync-interval \"1x\" is not a duration such as 500ms, 90s, 15m, 1h or 1d"),
        ("sync-interval: 10s\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "sync-interval must be at least 1m, got 10s"),
        ("watches:\n  - name: kitchen\n    address: AA:BB:CC:DD:EE", 3, "address \"AA:BB:CC:DD:EE\" is not a Bluetooth address such as AA:BB:CC:DD:EE:FF"),
        ("time-zone: Mars/Olympus\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "time-zone \"Mars/Olympus\" is unknown"),
        ("statistics-rule: 7\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "statistics-rule must be 0…3, got 7"),
        ("bus: tcp\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "bus must be system or session, got \"tcp\""),
        ("database: relative.sqlite\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "database must be an absolute path"),
        ("bus: system\n", 1, "no `watches:` list"),
        ("watches: []", 1, "watches must be a list with at least one entry"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n  - address: aa:bb:cc:dd:ee:ff", 3, "the watch AA:BB:CC:DD:EE:FF is listed twice"),
        ("watches:\n  - name: a\n    adapter: hci0", 2, "this watch has no address"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    seed: 3", 3, "seed applies only to a simulated watch"),
        ("watches:\n  - simulated: true\n    pause-after-packets: 10", 3, "pause-after-packets and resume-file go together"),
        ("watches:\n  - simulated: true\n    pause-after-packets: 10\n    resume-file: go", 4, "resume-file must be an absolute path"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    heart-rate-interval: 1s", 3, "heart-rate-interval applies only to a simulated watch"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    smart-wake: {0: 300}", 3, "smart-wake window must be 0…255, got 300"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    smart-wake: {first: 30}", 3, "smart-wake: \"first\" is not an alarm slot"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    smart-wake: 30", 3, "smart-wake must map alarm slots to minutes"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    protocol: 1.0", 3, "protocol applies only to a simulated watch"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    ground-truth: /tmp/t.json", 3, "ground-truth applies only to a simulated watch"),
        ("watches:\n  - simulated: true\n    ground-truth: t.json", 3, "ground-truth must be an absolute path, got \"t.json\""),
        ("watches:\n  - simulated: true\n    protocol: 2", 3, "protocol \"2\" is not one the simulated watch speaks; write 1.0 (version 1 only) or 1.1"),
        ("heart-rate-retention: 10m\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "heart-rate-retention must be at least 1h, got 10m"),
        ("watches:\n  - simulated: true\n    protocol-v1: false\n    standard-services: false", 3, "a simulated watch needs protocol-v1 or standard-services"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    adapter: usb0", 3, "adapter must look like hci0"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    dialect: klingon", 3, "dialect: \"klingon\" is not a dialect tsgateway speaks; use one of v1, standard"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n  bad indentation: [", 3, "not valid YAML"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\nbus: system\nbus: session", 3, "\"bus\" is given more than once (first on this line)"),
        ("- just\n- a list", 1, "the file must be a mapping"),
        // Found at the end of the file: libyaml's line is the one after the last (scripts/fuzz config found it).
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    name", 3, "not valid YAML: could not find expected ':'"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    name\n", 3, "not valid YAML: could not find expected ':'"),
        ("bus: system\nwatches:\n", 2, "watches must be a list with at least one entry"),
        ("report:\n  days: 7\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 2, "report needs `directory: /var/lib/tsgateway/reports`"),
        ("report:\n  directory: reports\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 2, "report directory must be an absolute path, got \"reports\""),
        ("report:\n  directory: /srv/r\n  mode: 0666\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 3, "report mode must be 0600 (owner only, the default), 0640 (and the group) or 0644 (everyone), got \"0666\""),
        ("report:\n  directory: /srv/r\n  every: 30s\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 3, "every must be at least 1m, got 30s"),
        ("report:\n  directory: /srv/r\n  days: 0\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 3, "days must be 1…366, got 0"),
        ("report:\n  directory: /srv/r\n  interval: 1h\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 3, "unknown key \"interval\" in report"),
        ("report: /srv/r\nwatches:\n  - address: AA:BB:CC:DD:EE:FF", 1, "report must be a mapping"),
    ])
    func mistakes(text: String, line: Int, message: String) throws {
        let error = try #require(throws: ConfigurationError.self) { try GatewayConfiguration.parse(text, file: "/etc/tsgateway/config.yaml") }
        #expect(error.line == line, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.description.hasPrefix("/etc/tsgateway/config.yaml:\(line): "))
    }

    @Test("report: directory, days, how often and the files' mode (0600 unless it says otherwise)")
    func report() throws {
        let watches = "watches:\n  - address: AA:BB:CC:DD:EE:FF\n    name: bedroom"
        let defaults = try #require(try GatewayConfiguration.parse("report:\n  directory: /var/lib/tsgateway/reports\n" + watches, file: "c.yaml").report)
        #expect(defaults == GatewayConfiguration.ReportSettings(directory: "/var/lib/tsgateway/reports"))
        #expect(defaults.days == 30 && defaults.every == .seconds(3600) && defaults.mode == 0o600)
        for written in ["0644", "644", "\"0644\""] {
            let shared = try #require(try GatewayConfiguration.parse("""
                report:
                  directory: /var/www/sleep
                  days: 7
                  every: 15m
                  mode: \(written)
                """ + "\n" + watches, file: "c.yaml").report)
            #expect(shared.directory == "/var/www/sleep" && shared.days == 7 && shared.every == .seconds(900) && shared.mode == 0o644, "mode: \(written)")
        }
        #expect(try GatewayConfiguration.parse(watches, file: "c.yaml").report == nil)
    }

    @Test("a missing file says how to create one")
    func missingFile() throws {
        let error = try #require(throws: ConfigurationError.self) { try GatewayConfiguration.load(path: "/nonexistent/config.yaml") }
        #expect(error.description.contains("cannot read the file") && error.description.contains("udev/config.example.yaml"))
    }
}
