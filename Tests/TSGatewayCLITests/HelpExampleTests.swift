import Foundation
import Testing
import TSTestSupport

/// Every example a command's `--help` shows is run, so an example can never teach a flag the
/// command does not take.
@Suite struct HelpExampleTests {
    /// One node of `tsgateway --experimental-dump-help`: every command with its discussion and arguments.
    struct CommandHelp: Decodable {
        struct Argument: Decodable {
            struct Name: Decodable { var kind: String; var name: String }
            var names: [Name]?
        }
        var commandName: String
        var discussion: String?
        var subcommands: [CommandHelp]?
        var arguments: [Argument]?

        var takesSimulate: Bool { arguments?.contains { $0.names?.contains { $0.kind == "long" && $0.name == "simulate" } ?? false } ?? false }

        /// The command `words` (after the program name) run: the deepest subcommand they name.
        func command(for words: some Collection<String>) -> CommandHelp {
            guard let first = words.first, let sub = subcommands?.first(where: { $0.commandName == first }) else { return self }
            return sub.command(for: words.dropFirst())
        }

        /// Every discussion of this command and its subcommands, depth first.
        var discussions: [String] { [discussion ?? ""] + (subcommands ?? []).flatMap(\.discussions) }
    }

    struct Example: CustomStringConvertible {
        var commandLine: ShellCommandLine
        var takesSimulate: Bool
        var description: String { commandLine.description }
    }

    /// The examples of every command's help, each once.
    static func examples() async throws -> [Example] {
        let cli = try CLI(); defer { cli.cleanUp() }
        let dump = try await cli.runDetached(["--experimental-dump-help"])
        #expect(dump.exited(0), "\(dump.summary)")
        struct ToolHelp: Decodable { var command: CommandHelp }
        let root = try JSONDecoder().decode(ToolHelp.self, from: Data(dump.stdout.utf8)).command
        var seen = Set<String>()
        var examples: [Example] = []
        for discussion in root.discussions {
            for line in try ShellCommandLine.lines(running: "tsgateway", in: discussion) where seen.insert(line.description).inserted {
                examples.append(Example(commandLine: line, takesSimulate: root.command(for: line.words.dropFirst()).takesSimulate))
            }
        }
        return examples
    }

    @Test func everyHelpExampleRunsAgainstTheSimulatedWatch() async throws {
        let examples = try await Self.examples()
        #expect(examples.count >= 25, "found only \(examples.map(\.description))")
        let known = Set(examples.map(\.description))
        for stale in ExampleArrangement.byExample.keys where !known.contains(stale) {
            Issue.record("an arrangement names an example no help shows any more: \(stale)")
        }
        var hardwareOnly: [String] = []
        for example in examples {
            let arrangement = ExampleArrangement.byExample[example.description] ?? .asWritten
            if let reason = arrangement.needsBluetoothHardware {
                hardwareOnly.append("\(example): \(reason)")
            }
            try await ExampleRun.check(example, arrangement)
        }
        print("Help examples that need a real Bluetooth adapter, run here only up to the missing bluetoothd (exit 69) to show they parse:\n  "
              + hardwareOnly.joined(separator: "\n  "))
    }

    @Test func theExampleSplitterReadsQuotesContinuationsPipesAndComments() throws {
        let lines = try ShellCommandLine.lines(running: "tsgateway", in: """
            Examples:
              tsgateway protocol encode --sequence 3 \\
                '{"kind": "x", "body": {"a": 1}}'
              not a command
              tsgateway events --type session | jq .
              tsgateway info --simulate   # the watch
              tsgateway simulate --adapter hci1 &
            """)
        #expect(lines == [
            ShellCommandLine(words: ["tsgateway", "protocol", "encode", "--sequence", "3", #"{"kind": "x", "body": {"a": 1}}"#]),
            ShellCommandLine(words: ["tsgateway", "events", "--type", "session"], pipedInto: ["jq", "."]),
            ShellCommandLine(words: ["tsgateway", "info", "--simulate"]),
            { var line = ShellCommandLine(words: ["tsgateway", "simulate", "--adapter", "hci1"]); line.inBackground = true; return line }(),
        ])
    }
}

/// What an example needs to run here beyond a fresh data directory and `--simulate`. Each is
/// listed with its reason; an example without an entry runs as written.
struct ExampleArrangement {
    /// Paths the example names (system files of a real installation) and the scratch files that
    /// stand in for them.
    var replacingPaths: [String: ScratchFile] = [:]
    /// Commands run first in the same data directory.
    var firstRunning: [[String]] = []
    /// The simulated watch's clock, for examples that name dates.
    var simulatorNow: String?
    /// A `tsgateway serve` of the test's own (scratch configuration, private bus) runs meanwhile.
    var withDaemon = false
    /// The example runs until it is stopped: how the test stops it.
    var stop: Stop?
    /// The default database holds heart-rate samples (`HeartRateSeed`), as `tsgateway serve` stores
    /// them, of a watch of its own: the example reads them as written, without `--simulate`.
    var heartRateStored = false
    /// Set for examples that need a real Bluetooth adapter: they are run against a bus without
    /// bluetoothd and must get as far as saying so (exit 69), which shows the line parses.
    var needsBluetoothHardware: String?

    enum ScratchFile {
        /// A configuration with one simulated watch, its database in the scratch directory.
        case daemonConfiguration
        /// A database that a sync has filled.
        case syncedDatabase
        /// An HCI capture (btsnoop) of a watch exchange, as `tsgateway capture` writes them.
        case capture
        /// A database holding heart-rate samples (`HeartRateSeed`).
        case heartRateDatabase
        /// The repository's own file at that path (an example run from the repository's root).
        case repositoryFile
    }

    enum Stop {
        /// Ctrl-C once it has been running a while; it must still be running then.
        case interruptAfter(Duration)
        /// SIGTERM once the daemon says it is serving; it must then exit 0.
        case terminateWhenServing
    }

    static let asWritten = ExampleArrangement()

    /// The date examples name November 2026: the simulated watch's clock is pinned after it, so
    /// those nights exist whenever the test runs.
    static let novemberClock = "2026-11-21T08:00:00Z"
    static let syncFirst = [["sleep", "sync", "--since", "30d", "--simulate"]]
    static let configPath = "/etc/tsgateway/config.yaml"

    static let byExample: [String: ExampleArrangement] = [
        // Reports and exports read the database: a sync fills it first.
        "tsgateway sleep show --last 7d": .init(firstRunning: syncFirst),
        "tsgateway sleep show --date 2026-11-20 --json": .init(firstRunning: syncFirst, simulatorNow: novemberClock),
        "tsgateway sleep show --date 2026-11-20 --svg night.svg": .init(firstRunning: syncFirst, simulatorNow: novemberClock),
        "tsgateway sleep report --last 30d --out sleep.html": .init(firstRunning: syncFirst),
        "tsgateway sleep report --from 2026-11-01 --to 2026-11-20 --rule 2 --out november.html": .init(firstRunning: syncFirst, simulatorNow: novemberClock),
        "tsgateway sleep export --format csv --out week.csv --last 7d": .init(firstRunning: syncFirst),
        "tsgateway sleep export --format healthkit --from 2026-11-01 --to 2026-11-07": .init(firstRunning: syncFirst, simulatorNow: novemberClock),
        "tsgateway sleep sync --from 2026-11-01 --to 2026-11-07": .init(simulatorNow: novemberClock),
        // The alarm in slot 1 is the one the examples before it set up (`set` fills slot 0, `add` slot 1).
        "tsgateway alarms disable 1": .init(firstRunning: [
            ["alarms", "set", "07:00", "--repeat", "workdays", "--label", "Work", "--simulate"],
            ["alarms", "add", "09:30", "--repeat", "weekends", "--label", "Weekend", "--snooze", "--simulate"],
        ]),
        // The outbox lives in the database: before the first sync there is none (exit 66, "nothing stored yet?").
        "tsgateway outbox status": .init(firstRunning: syncFirst),
        "tsgateway outbox retry": .init(firstRunning: syncFirst),
        // The installed configuration and database do not exist here: files of the test's own stand in.
        "tsgateway serve --config /etc/tsgateway/config.yaml --check": .init(replacingPaths: [configPath: .daemonConfiguration]),
        "tsgateway outbox status --config /etc/tsgateway/config.yaml --json": .init(replacingPaths: [configPath: .daemonConfiguration], firstRunning: [["sleep", "sync", "--since", "1d", "--simulate", "--db", "daemon/tsgateway.sqlite"]]),
        "tsgateway outbox retry --config /etc/tsgateway/config.yaml": .init(replacingPaths: [configPath: .daemonConfiguration], firstRunning: [["sleep", "sync", "--since", "1d", "--simulate", "--db", "daemon/tsgateway.sqlite"]]),
        "tsgateway outbox retry --db /var/lib/tsgateway/tsgateway.sqlite": .init(replacingPaths: ["/var/lib/tsgateway/tsgateway.sqlite": .syncedDatabase]),
        "tsgateway outbox status --db ./tsgateway.sqlite --json": .init(replacingPaths: ["./tsgateway.sqlite": .syncedDatabase]),
        // Heart-rate samples are stored by `tsgateway serve` while it holds a watch's link; the test stores some itself.
        "tsgateway hr history --since 12h": .init(heartRateStored: true),
        "tsgateway hr history --from 2026-11-20T22:00 --to 2026-11-21T07:00 --json": .init(heartRateStored: true),
        "tsgateway hr history --device AA:BB:CC:DD:EE:FF --since 7d": .init(heartRateStored: true),
        "tsgateway hr history --db /var/lib/tsgateway/tsgateway.sqlite --json": .init(replacingPaths: ["/var/lib/tsgateway/tsgateway.sqlite": .heartRateDatabase]),
        // The daemon runs until stopped; on a private bus, with simulated watches.
        "tsgateway serve --config /etc/tsgateway/config.yaml": .init(replacingPaths: [configPath: .daemonConfiguration], stop: .terminateWhenServing),
        "tsgateway serve --config dev.yaml --bus session -v": .init(replacingPaths: ["dev.yaml": .daemonConfiguration], stop: .terminateWhenServing),
        // Events come from a running daemon and are printed until Ctrl-C.
        "tsgateway events": .init(withDaemon: true, stop: .interruptAfter(.seconds(3))),
        "tsgateway events --type session --type wokeUp | jq .": .init(withDaemon: true, stop: .interruptAfter(.seconds(3))),
        // Changes made on the watch are printed until Ctrl-C (the simulated watch edits every 2 s).
        "tsgateway alarms watch": .init(stop: .interruptAfter(.seconds(5))),
        // The daemon's simulated watch has a heart that beats once a second.
        "tsgateway events --type heartRate --count 5": .init(withDaemon: true),
        // A capture needs root and a real adapter; the file the decode examples read is one of the test's own.
        "tsgateway protocol decode --btsnoop sync.btsnoop": .init(replacingPaths: ["sync.btsnoop": .capture]),
        "tsgateway protocol decode --btsnoop sync.btsnoop --json": .init(replacingPaths: ["sync.btsnoop": .capture]),
        // Run from the repository's root, where the captures they play are.
        "tsgateway protocol replay protocol-spec/qring/captures/qring-sync.jsonl --db ring.sqlite --from 2026-11-24T00:00:00Z --now 2026-11-27T00:00:00Z --time-zone Europe/Berlin":
            .init(replacingPaths: ["protocol-spec/qring/captures/qring-sync.jsonl": .repositoryFile]),
        "tsgateway protocol replay protocol-spec/npk/captures/npk-sync.jsonl --db npk.sqlite --from 2026-11-24T00:00:00Z --now 2026-11-27T00:00:00Z --time-zone Europe/Berlin --json":
            .init(replacingPaths: ["protocol-spec/npk/captures/npk-sync.jsonl": .repositoryFile]),
        // A peripheral and a central on two real adapters.
        "tsgateway simulate --adapter hci1 &": .init(needsBluetoothHardware: "advertises on a real adapter (the end-to-end suite runs it under QEMU with btvirt)"),
        "tsgateway simulate --adapter hci1 --live-stage-interval 5": .init(needsBluetoothHardware: "advertises on a real adapter (the end-to-end suite runs it with --live-stage-interval 3 for the gateway's smart wake)"),
        "tsgateway scan --adapter hci0": .init(needsBluetoothHardware: "scans on a real adapter (the end-to-end suite runs it under QEMU with btvirt)"),
        "tsgateway scan --count 1 --timeout 30 --json": .init(needsBluetoothHardware: "scans on a real adapter (the end-to-end journeys scan so, under QEMU with btvirt; ScanCountTests against a mock bluetoothd)"),
        "tsgateway simulate --adapter hci1 --dialect npk --sleep-fault corrupt-day:3":
            .init(needsBluetoothHardware: "advertises on a real adapter (the e2e journey npk runs the NPK watch under QEMU with btvirt)"),
        "tsgateway simulate --adapter hci1 --dialect qring --ring-fault wrong-crc":
            .init(needsBluetoothHardware: "advertises on a real adapter (the e2e journey qring runs the ring under QEMU with btvirt)"),
        "tsgateway simulate --adapter hci1 --dialect huami --answer-timing before-response":
            .init(needsBluetoothHardware: "advertises on a real adapter (the e2e journey huami runs the band under QEMU with btvirt, E2E_ANSWER_TIMING)"),
        "tsgateway simulate --adapter hci1 --dialect qring --answer-timing late:3000":
            .init(needsBluetoothHardware: "advertises on a real adapter (every e2e journey's devices answer so with E2E_ANSWER_TIMING=late:3000)"),
        "tsgateway probe AA:BB:CC:DD:EE:FF": .init(needsBluetoothHardware: probeRuns),
        "tsgateway probe AA:BB:CC:DD:EE:FF --adapter hci1 --json": .init(needsBluetoothHardware: probeRuns),
        "tsgateway pair AA:BB:CC:DD:EE:FF": .init(needsBluetoothHardware: pairRuns),
        "tsgateway pair AA:BB:CC:DD:EE:FF --dialect npk --credential auth-code=CODE": .init(needsBluetoothHardware: pairRuns),
        "tsgateway pair AA:BB:CC:DD:EE:FF --passkey 123456":
            .init(needsBluetoothHardware: "pairs with a real watch that shows a passkey (BlueZTransportTests pairs a watch bridged to a fake bluetoothd by passkey entry; the e2e journey garmin types the simulated Garmin watch's under QEMU with btvirt)"),
    ]

    static let pairRuns = "pairs with a real watch (NpkPairTests and ToyFamilyCommandTests pair watches bridged to a fake bluetoothd; the e2e journeys pair under QEMU with btvirt)"
    static let probeRuns = "connects to a real device (ProbeCLITests probes a ring bridged to a fake bluetoothd; the e2e journey probe runs it under QEMU with btvirt)"
}

/// One example run in a scratch directory of its own with a private D-Bus (standing in for both
/// the system and the session bus, and for BlueZ's bus), so nothing touches the host's buses.
enum ExampleRun {
    static func check(_ example: HelpExampleTests.Example, _ arrangement: ExampleArrangement) async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let bus = try PrivateBus(); defer { bus.stop() }
        var settings = [
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address, "TSGATEWAY_DBUS_ADDRESS": bus.address,
        ]
        if let now = arrangement.simulatorNow { settings["TSGATEWAY_SIMULATOR_NOW"] = now }
        var environment = cli.environment(settings)
        environment.removeValue(forKey: "TSGATEWAY_BUS")
        let binary = try CLI.requireBinary(), home = cli.home, childEnvironment = environment
        @Sendable func run(_ arguments: [String], interruption: ChildProcess.Interruption? = nil,
                           timeout: Duration = .seconds(120)) async throws -> ChildProcess.Output {
            try await ChildProcess.run(binary, arguments: arguments, stdin: Data(), environment: childEnvironment, currentDirectory: home,
                                       interruption: interruption, timeout: timeout)
        }

        var arguments = Array(example.commandLine.words.dropFirst())
        for (original, scratch) in arrangement.replacingPaths {
            let path = cli.home.appendingPathComponent(original.hasPrefix("/") ? URL(fileURLWithPath: original).lastPathComponent : original).path
            switch scratch {
            case .daemonConfiguration:
                try Data("""
                    database: \(cli.home.path)/daemon/tsgateway.sqlite
                    bus: system
                    time-zone: Europe/Berlin
                    watches:
                      - simulated: true
                        name: bedroom
                        live-stage-interval: 1s
                    """.utf8).write(to: URL(fileURLWithPath: path))
            case .syncedDatabase:
                let sync = try await run(["sleep", "sync", "--since", "1d", "--simulate", "--db", path])
                #expect(sync.exited(0), "preparing \(path) for `\(example)`: \(sync.summary)")
            case .capture:
                try Data(CaptureCLITests.capture).write(to: URL(fileURLWithPath: path))
            case .heartRateDatabase:
                try await HeartRateSeed.storeExampleSamples(at: path)
            case .repositoryFile:
                let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: repository.appendingPathComponent(original), to: URL(fileURLWithPath: path))
            }
            arguments = arguments.map { $0 == original ? path : $0 }
        }
        if arrangement.heartRateStored {
            try await HeartRateSeed.storeExampleSamples(at: cli.home.appendingPathComponent("tsgateway/tsgateway.sqlite").path)
        }
        for preparation in arrangement.firstRunning {
            let result = try await run(preparation)
            #expect(result.exited(0), "preparing `\(example)` with `tsgateway \(preparation.joined(separator: " "))`: \(result.summary)")
        }
        if arrangement.needsBluetoothHardware != nil {
            let result = try await run(arguments, interruption: .init(signal: SIGKILL, when: .after(.seconds(30))))
            #expect(result.exited(69), "`\(example)` should parse and stop at the missing bluetoothd (69): \(result.summary)")
            return
        }
        if example.takesSimulate, !arrangement.heartRateStored, arrangement.replacingPaths.values.allSatisfy({ $0 != .heartRateDatabase }) {
            arguments.insert("--simulate", at: 0)
        }

        let daemonStop = StopFlag()
        var daemon: Task<ChildProcess.Output, any Error>?
        if arrangement.withDaemon {
            let configuration = cli.home.appendingPathComponent("daemon.yaml")
            try Data("""
                database: \(cli.home.path)/daemon/tsgateway.sqlite
                bus: system
                watches:
                  - simulated: true
                    name: bedroom
                    live-stage-interval: 1s
                """.utf8).write(to: configuration)
            daemon = Task { try await run(["serve", "--config", configuration.path], interruption: .init(signal: SIGTERM, when: .condition { daemonStop.isSet }),
                                    timeout: .seconds(360)) }
            #expect(try await serving(bus.address), "the daemon for `\(example)` did not take its name")
        }
        defer { daemonStop.set() }

        let interruption: ChildProcess.Interruption? = switch arrangement.stop {
        case let .interruptAfter(delay): .init(signal: SIGINT, when: .after(delay))
        case .terminateWhenServing: .init(signal: SIGTERM, when: .outputContains("serving 1 watch as org.tsgateway"))
        case nil: nil
        }
        let result = try await run(arguments, interruption: interruption)
        switch arrangement.stop {
        case .interruptAfter:
            #expect(result.wasInterrupted && result.signal == SIGINT, "`\(example)` should run until Ctrl-C: \(result.summary)")
        case .terminateWhenServing:
            #expect(result.wasInterrupted && result.exited(0), "`\(example)` should serve and stop cleanly on SIGTERM: \(result.summary)")
        case nil:
            #expect(result.exited(0), "`\(example)`: \(result.summary)")
        }
        if let pipe = example.commandLine.pipedInto, let program = pipe.first {
            // The rest of the pipeline reads what the example printed.
            let consumer = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: [program] + pipe.dropFirst(),
                                                      stdin: Data(result.stdout.utf8), timeout: .seconds(30))
            #expect(consumer.exited(0), "`\(example)`: \(pipe.joined(separator: " ")) did not take the output: \(consumer.summary)")
        }
        if let daemon {
            daemonStop.set()
            let ended = try await daemon.value
            #expect(ended.exited(0), "the daemon for `\(example)`: \(ended.summary)")
        }
    }

    /// Whether org.tsgateway gets an owner on the bus within two minutes: beside CI's virtual
    /// machines a debug daemon has taken longer than a hundred turns of this loop to start.
    static func serving(_ address: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let reply = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/dbus-send"), arguments: [
                "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:org.tsgateway",
            ], timeout: .seconds(10))
            if reply.stdout.contains("boolean true") { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}

/// A flag one task sets and another polls.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
