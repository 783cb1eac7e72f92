import Foundation
import TSTestSupport
import Testing

/// `tsgateway report-problem`: one 0600 archive with a MANIFEST, and without
/// --include-personal-data none of the person's sleep records, heart rate, alarm labels or auth
/// codes, though the command it ran under capture printed them all.
@Suite struct ReportProblemCLITests {
    static let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-21T08:00:00Z"]
    static let label = "Zahnarzt-Geheim"
    static let authCode = "918273"

    /// A data directory holding a synced NPK watch's sleep and heart rate and an alarm with a
    /// label; returns the values a report must not hold: the label, a night's start, a heart-rate
    /// sample's time and reading as `hr history --json` prints them, and the auth code.
    static func seed(_ cli: CLI) async throws -> (values: [String], commands: String) {
        let sync = try await cli.runDetached(["sleep", "sync", "--from", "2026-11-18", "--to", "2026-11-20", "--simulate", "--dialect", "npk"], environment: pinned)
        #expect(sync.status == 0, "\(sync.stderr)")
        let alarm = try await cli.runDetached(["alarms", "set", "07:00", "--label", label, "--simulate"], environment: pinned)
        #expect(alarm.status == 0, "\(alarm.stderr)")
        let show = ["sleep", "show", "--date", "2026-11-20", "--no-chart", "--json", "--simulate", "--tz", "Europe/Berlin"]
        let report = try #require(try await cli.json(show, environment: pinned) as? [String: Any])
        let night = try #require(((report["days"] as? [[String: Any]])?.first?["nightSleeps"] as? [[String: Any]])?.first)
        let start = try #require((night["summary"] as? [String: Any])?["start"] as? Int)
        let history = ["hr", "history", "--from", "2026-11-19T03:00", "--to", "2026-11-19T04:00", "--json"]
        let samples = try await cli.runDetached(history, environment: pinned)
        #expect(samples.status == 0, "\(samples.stderr)")
        let sample = try #require(samples.stdout.range(of: #"\{[^{}]*"bpm"[^{}]*\}"#, options: .regularExpression).map { String(samples.stdout[$0]) },
                                  "\(samples.stdout.prefix(400))")
        let binary = try CLI.requireBinary().path
        // Everything the person's data would show up in: the alarm table, the night, the samples, and a pairing with an auth code.
        let commands = [
            "\(binary) -v alarms get --simulate",
            "\(binary) -v \(show.joined(separator: " "))",
            "\(binary) -v \(history.joined(separator: " "))",
            "\(binary) -v pair AA:BB:CC:DD:EE:09 --dialect npk --auth-code \(authCode)",
        ].joined(separator: "; ")
        let verify = try await cli.runDetached(["--simulate", "alarms", "get"], environment: pinned)
        #expect(verify.stdout.contains(label), "the seed holds the label: \(verify.stdout)")
        #expect(samples.stdout.contains(sample))
        return ([label, String(start), sample, authCode], commands)
    }

    static func extract(_ archive: String) throws -> [String: String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "-xzf", archive, "-C", folder]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/tsgateway-report") {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/tsgateway-report/" + name))
            files[name] = String(decoding: data, as: UTF8.self)
        }
        return files
    }

    @Test func anArchiveWithoutPersonalDataHoldsNoneOfItAndListsWhatItHolds() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let (values, commands) = try await Self.seed(cli)
        let bare = try PrivateBus(); defer { bare.stop() }
        var environment = Self.pinned
        environment["TSGATEWAY_DBUS_ADDRESS"] = bare.address
        let archive = cli.home.appendingPathComponent("report.tar.gz").path
        let made = try await cli.runDetached(["report-problem", "--out", archive, "--device", "AA:BB:CC:DD:EE:09", "--capture", "--", "sh", "-c", commands],
                                             environment: environment, timeout: .seconds(300))
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.isEmpty, "progress goes to stderr: \(made.stdout)")
        #expect(made.stderr.contains("report-problem: the command under an HCI capture…"), "\(made.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: archive)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let files = try Self.extract(archive)
        for value in values {
            for (name, text) in files { #expect(!text.contains(value), "\(name) holds \(value)") }
        }
        let manifest = try #require(files["MANIFEST"])
        for held in ["version.txt", "system.txt", "adapter.txt", "command.txt", "log.txt"] {
            #expect(manifest.contains("\n  \(held)  "), "MANIFEST lists \(held): \(manifest)")
            #expect(files[held] != nil, "the archive holds \(held)")
        }
        #expect(manifest.contains("personal data: left out or masked"))
        // No bluetoothd on the bus, no CAP_NET_RAW here: both noted, neither fatal.
        #expect(manifest.contains("  probe.json  the probe failed (exit status 69): tsgateway: bluetoothd is not running"), "\(manifest)")
        #expect(manifest.contains("  capture.btsnoop  no HCI capture: "), "\(manifest)")
        #expect(files["version.txt"]?.hasPrefix("tsgateway 0.") == true)
        #expect(files["command.txt"]?.contains("--auth-code (masked)") == true, "\(files["command.txt"] ?? "")")
        #expect(files["command.txt"]?.contains("standard output are left out") == true)
        #expect(files["log.txt"]?.isEmpty == false, "the -v log is kept (masked)")
    }

    @Test func withIncludePersonalDataTheCommandsOutputIsKept() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let alarm = try await cli.runDetached(["alarms", "set", "07:00", "--label", Self.label, "--simulate"])
        #expect(alarm.status == 0, "\(alarm.stderr)")
        let archive = cli.home.appendingPathComponent("kept.tar.gz").path
        let binary = try CLI.requireBinary().path
        let made = try await cli.runDetached(["report-problem", "--out", archive, "--include-personal-data", "--capture", "--",
                                              binary, "alarms", "get", "--simulate"], timeout: .seconds(300))
        #expect(made.status == 0, "\(made.stderr)")
        let files = try Self.extract(archive)
        #expect(files["command.txt"]?.contains(Self.label) == true, "\(files["command.txt"] ?? "")")
        #expect(files["MANIFEST"]?.contains("personal data: kept (--include-personal-data)") == true)
    }

    @Test func badInputSaysWhatToType() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        for (arguments, message) in [(["report-problem", "--out", "r.zip"], "--out must name a .tar.gz file, got \"r.zip\""),
                                     (["report-problem", "--out", "r.tar.gz", "--capture"], "--capture needs the command to run after --"),
                                     (["report-problem", "--out", "r.tar.gz", "--", "ls"], "add --capture"),
                                     (["report-problem", "--out", "r.tar.gz", "--device", "watch"], "--device must be an address")] {
            let result = try await cli.runDetached(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
