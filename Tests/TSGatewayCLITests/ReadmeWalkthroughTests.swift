import Foundation
import Testing
import TSTestSupport

/// README's "Walk-through with the simulated watch" works as written, line by line, in one
/// fresh data directory.
@Suite struct ReadmeWalkthroughTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// The command lines of the first sh block under the walk-through's heading.
    static func walkthrough() throws -> [ShellCommandLine] { try commands(under: "## Walk-through with the simulated watch") }

    /// The command lines of the first sh block under `heading`.
    static func commands(under heading: String) throws -> [ShellCommandLine] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(text.range(of: heading), "README has no section \(heading)")
        let rest = text[section.upperBound...]
        let blockStart = try #require(rest.range(of: "```sh\n"))
        let blockEnd = try #require(rest[blockStart.upperBound...].range(of: "```"))
        return try ShellCommandLine.lines(running: "tsgateway", in: String(rest[blockStart.upperBound..<blockEnd.lowerBound]))
    }

    @Test func everyWalkthroughCommandSucceedsInOrder() async throws {
        let lines = try Self.walkthrough()
        #expect(lines.count >= 13, "found only \(lines)")
        let cli = try CLI(); defer { cli.cleanUp() }
        let bus = try PrivateBus(); defer { bus.stop() }
        // No daemon is serving on this bus, so the commands use their own simulated watch.
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address, "TSGATEWAY_DBUS_ADDRESS": bus.address]
        for line in lines {
            let arguments = Array(line.words.dropFirst())
            #expect(line.pipedInto == nil && !line.inBackground, "\(line): the walk-through has no pipes or background jobs")
            if arguments.starts(with: ["alarms", "watch"]) {
                // Runs until Ctrl-C: interrupted once it has printed a change made on the watch.
                let result = try await cli.runDetached(arguments, environment: environment,
                                         interruption: .init(signal: SIGINT, when: .outputContains("alarms changed (watch):")), timeout: .seconds(60))
                #expect(result.wasInterrupted && result.signal == SIGINT, "\(line) should run until Ctrl-C: \(result.summary)")
                #expect(result.stdout.hasPrefix("watching for alarm changes made on the watch (Ctrl-C to stop)\n"), "\(result.summary)")
                #expect(result.stdout.contains("alarms changed (watch):"), "\(result.summary)")
            } else {
                let result = try await cli.runDetached(arguments, environment: environment)
                #expect(result.exited(0), "\(line): \(result.summary)")
            }
        }
        // `sleep export … --out week.csv` wrote its file where it was run, readable by its owner only.
        let export = cli.home.appendingPathComponent("week.csv").path
        let mode = try FileManager.default.attributesOfItem(atPath: export)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// The families whose centrals the gateway has, by the names the README gives them.
    static let families = ["protocol v1", "NPK", "QRing", "Huami"]

    /// README's opening (before its first section) and `tsgateway --help` name every family that
    /// exists, and none as still being added.
    @Test func theOpeningNamesEveryFamilyThatExists() async throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let opening = String(text[..<(text.range(of: "\n## ")?.lowerBound ?? text.endIndex)])
        let cli = try CLI(); defer { cli.cleanUp() }
        let help = try await cli.runDetached(["--help"])
        #expect(help.exited(0), "\(help.summary)")
        for (place, words) in [("README's opening", opening), ("tsgateway --help", help.stdout)] {
            let flat = words.replacingOccurrences(of: "\n", with: " ")
            for family in Self.families { #expect(flat.contains(family), "\(place) does not name \(family): \(words)") }
            #expect(!flat.lowercased().contains("being added"), "\(place): \(words)")
        }
    }

    /// The walk-through's pattern with another dialect: `sleep sync --simulate --dialect huami`,
    /// then each of its commands that read only the database (`sleep show`, `report`, `export`,
    /// and `hr history` of the heart rate the sync stored) with the same connection options,
    /// after the subcommand and before it.
    @Test func theCommandsThatReadTheDatabaseTakeTheSyncsConnectionOptionsInEitherPosition() async throws {
        let readers = try Self.walkthrough().map { Array($0.words.dropFirst()) }.filter { words in
            ["show", "report", "export"].contains { words.starts(with: ["sleep", $0]) }
        }
        #expect(readers.count == 3, "found \(readers)")
        let cli = try CLI(); defer { cli.cleanUp() }
        let bus = try PrivateBus(); defer { bus.stop() }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address, "TSGATEWAY_DBUS_ADDRESS": bus.address]
        let connection = ["--simulate", "--dialect", "huami", "--adapter", "hci0", "-v"]
        let sync = try await cli.runDetached(["sleep", "sync", "--since", "7d"] + connection, environment: environment)
        #expect(sync.exited(0), "\(sync.summary)")
        for words in readers {
            let own = words.filter { $0 != "--simulate" } + (words.contains("--out") ? ["--force"] : [])
            let path = Array(own.prefix(2)), rest = Array(own.dropFirst(2))
            for arguments in [path + rest + connection, connection + path + rest] {
                let result = try await cli.runDetached(arguments, environment: environment)
                #expect(result.exited(0), "tsgateway \(arguments.joined(separator: " ")): \(result.summary)")
            }
        }
        for arguments in [["hr", "history", "--since", "7d", "--json"] + connection, connection + ["hr", "history", "--since", "7d", "--json"]] {
            let result = try await cli.runDetached(arguments, environment: environment)
            #expect(result.exited(0) && result.stdout.contains("\"bpm\""), "tsgateway \(arguments.joined(separator: " ")): \(result.summary)")
        }
        let unknown = try await cli.runDetached(["sleep", "show", "--last", "7d", "--simulate", "--dialect", "garmn"], environment: environment)
        #expect(unknown.exited(64) && unknown.stderr.contains("--dialect"), "\(unknown.summary)")
    }

    /// "Smart wake": the watch-side commands work as written, and the alarms they set are shown
    /// with their windows.
    @Test func smartWakeCommandsSucceedInOrder() async throws {
        let lines = try Self.commands(under: "### On the watch")
        #expect(lines.count == 4, "found \(lines)")
        let cli = try CLI(); defer { cli.cleanUp() }
        let bus = try PrivateBus(); defer { bus.stop() }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address, "TSGATEWAY_DBUS_ADDRESS": bus.address]
        var last = ""
        for line in lines {
            let result = try await cli.runDetached(Array(line.words.dropFirst()), environment: environment)
            #expect(result.exited(0), "\(line): \(result.summary)")
            last = result.stdout
        }
        #expect(last.contains("30 min") && last.contains("45 min"), "alarms get shows the windows: \(last)")
    }
}
