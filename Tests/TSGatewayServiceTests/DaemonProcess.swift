import Foundation
import TSDBus
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSSimulatedHistory
import TSSimulator
import TSStore
import TSTestSupport
import Testing

/// The built `tsgateway serve` running as a child process against a private bus, with its own
/// directory, configuration and database; plus the CLI pointed at it.
final class DaemonProcess: @unchecked Sendable {
    let bus: PrivateBus
    let directory: URL
    let configPath: String
    let databasePath: String
    /// Pins the simulated watches' clock, so that every run (and restart) holds the same records.
    let simulatorNow: Date
    private(set) var process: SpawnedProcess?
    private(set) var logPath: String
    /// Set in the daemon's environment besides the usual (`TSGATEWAY_CLOCK`).
    var extraEnvironment: [String: String] = [:]
    /// The disk the database lives on, when a test gives one: the daemon runs in its mount
    /// namespace (read its database with `ScratchDisk.query`, not `store()`).
    let disk: ScratchDisk?

    /// The executable beside the test bundle in the build directory.
    static let binary: URL? = CLI.binary

    /// `watches`: the YAML list entries (without the leading `- `), one per watch.
    /// `disk`: the database goes on it (the daemon runs in its namespace).
    init(watches: [String], extraConfig: String = "", firstSyncDays: Int = 60, bus: PrivateBus? = nil, disk: ScratchDisk? = nil) throws {
        self.bus = try bus ?? PrivateBus()
        self.disk = disk
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-daemon-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        configPath = directory.appendingPathComponent("config.yaml").path
        databasePath = disk.map { $0.mountPoint + "/tsgateway.sqlite" } ?? directory.appendingPathComponent("data/tsgateway.sqlite").path
        logPath = directory.appendingPathComponent("serve.log").path
        simulatorNow = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60)
        let list = watches.map { "  - " + $0.replacingOccurrences(of: "\n", with: "\n    ") }.joined(separator: "\n")
        try Data("""
            database: \(databasePath)
            bus: system
            time-zone: UTC
            first-sync-days: \(firstSyncDays)
            reconnect-min: 100ms
            reconnect-max: 2s
            \(extraConfig)
            watches:
            \(list)
            """.utf8).write(to: URL(fileURLWithPath: configPath))
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment.removeValue(forKey: "TSGATEWAY_BUS")
        environment["TSGATEWAY_SIMULATOR_NOW"] = ISO8601DateFormatter().string(from: simulatorNow)
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("cli-data").path
        environment["TZ"] = "UTC"
        return environment.merging(extraEnvironment) { $1 }
    }

    /// Starts the daemon and waits until it owns its name.
    func start(arguments extra: [String] = []) async throws {
        let binary = try #require(Self.binary, "tsgateway is not built beside the tests; run `swift build --build-tests` first")
        let commandLine = disk.map { $0.inside([binary.path, "serve", "--config", configPath, "-v"] + extra) } ?? (binary, ["serve", "--config", configPath, "-v"] + extra)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let logFile = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? logFile.close() }
        try logFile.seekToEnd()
        let process = try Spawn.start(commandLine.0.path, arguments: commandLine.1, environment: environment,
                                      stdout: .descriptor(logFile.fileDescriptor), stderr: .descriptor(logFile.fileDescriptor))
        self.process = process
        let probe = try BusConnection(.address(bus.address))
        defer { probe.close() }
        // By the clock, not by turns: beside CI's virtual machines a debug daemon can take a minute to start.
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try await probe.nameHasOwner(GatewayBusAPI.busName) { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BusTestError("tsgateway serve did not take its name; its log:\n\(log())")
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        process?.signal(number)
    }

    /// Waits for the daemon to exit; nil if it is still running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32? {
        guard let process else { return nil }
        return switch await process.ended(within: timeout) {
        case let .exited(code): code
        case let .signalled(number): number
        case nil: nil
        }
    }

    func stop() async {
        signal(SIGTERM)
        if (try? await waitForExit(timeout: .seconds(10))) == nil { signal(SIGKILL); _ = try? await waitForExit() }
    }

    func cleanUp() async {
        await stop()
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A test that failed before `cleanUp` leaves no daemon behind.
    deinit {
        process?.signal(SIGKILL)
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    typealias Result = ChildProcess.Output

    /// Runs the CLI against the daemon's bus, as root or (uid) as another user.
    /// A command still running after `timeout` is killed and reported with its output so far.
    func cli(_ arguments: [String], asUser uid: UInt32? = nil, environment extra: [String: String] = [:],
             timeout: Duration = .seconds(90), interruptAfter: Duration? = nil) async throws -> Result {
        let binary = try #require(Self.binary)
        let (executable, commandLine) = uid.map {
            (URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=\($0)", "--regid=\($0)", "--clear-groups", "--", binary.path] + arguments)
        } ?? (binary, arguments)
        let result = try await ChildProcess.run(executable, arguments: commandLine, environment: environment.merging(extra) { $1 },
                                                interruption: interruptAfter.map { ChildProcess.Interruption(when: .after($0)) }, timeout: timeout)
        if result.timedOut {
            throw BusTestError("`tsgateway \(arguments.joined(separator: " "))` still ran after \(timeout); its stderr: \(result.stderr)\ndaemon log:\n\(log())")
        }
        return result
    }

    /// The records a simulated watch of this seed holds (the daemon's first sync reaches all of them).
    func groundTruth(seed: UInt64, days: Int) -> [SleepItem] {
        SleepDataGenerator(seed: seed, timeZone: TimeZone(identifier: "UTC")!).records(days: days, lastMorning: simulatorNow, notAfter: simulatorNow)
    }

    /// The database, opened beside the daemon (SQLite WAL lets both read).
    func store() throws -> GatewayStore { try GatewayStore(path: databasePath) }
}

/// Polls `condition` until it holds or `timeout` passes. 90 s: on CI's two cores, with the whole
/// suite beside them, a daemon's start, connects and first publishes took over 30 s that take a
/// second or two alone; a condition that holds returns at once, so only a failure waits that long.
func eventually(timeout: Duration = .seconds(90), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
