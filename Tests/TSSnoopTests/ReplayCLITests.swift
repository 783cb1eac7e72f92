import Foundation
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore
import TSTestSupport
import TSTransport
import TSWatchService

/// `tsgateway protocol replay`: each dialect's simulated watch synced through the watch
/// operations `sleep sync` uses, over the capturing transport, with the clock pinned; the capture
/// played back by the command into a new database holds the records the live sync stored, and a
/// replay that cannot follow the capture (another dialect, an unreadable file, a missing key, a
/// clock other than the recorded one) is a clear error with its exit status.
@Suite(.serialized) struct ReplayCLITests {
    static let now = Date(timeIntervalSince1970: 1_795_737_600)
    /// The zone the CLI runs in (`CLI.environment`): the recorded central wrote its clock in it.
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    static let from = Int64(now.timeIntervalSince1970) - 3 * 86_400
    static let watch = WatchID("00:00:5E:00:53:02")!
    /// Every family with a simulated device whose exchange a capture can hold.
    static let dialects: [Dialect] = WatchFamilies.builtIn.filter { $0.simulated != nil && $0.dialect.capturable != nil }.map(\.name)

    struct Recorded {
        var entries: [CaptureEntry]
        var report: SleepSyncReport
        var records: [SleepItem]
        var secret: PairingSecret?
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// The dialect's simulated watch, 3 days of history, synced as `sleep sync` syncs over the capturing transport.
    static func recordSync(_ name: Dialect, in directory: URL) async throws -> Recorded {
        let options = DialectCaptureTests.threeDays(in: zone, until: now)
        let family = try WatchFamilies.named(name)
        let link = try #require(family.simulated).open(options)
        let recording = RecordingTransport(recording: link.transport)
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        // The secret the CLI's central is given: the one a dialect takes on every connect (DeviceSession).
        let secret = family.dialect.credential?.neededOnEveryConnect == true ? link.pairingSecret : nil
        configuration.pairingSecret = secret
        let store = try GatewayStore(path: directory.appendingPathComponent("live-\(name).sqlite").path)
        let central = family.dialect.makeCentral(recording, configuration)
        let operations = WatchOperations(watch: central, store: store, watchId: watch, policy: WatchPolicy(timeZone: zone))
        try await operations.connect()
        let report = try await operations.syncSleep(SyncRequest(from: from))
        await central.disconnect()
        var entries = await recording.entries()
        for index in entries.indices where entries[index].direction == .open { entries[index].dialect = name.rawValue }
        return Recorded(entries: entries, report: report, records: try await store.sleepRecords(watch: watch), secret: secret)
    }

    static func write(_ entries: [CaptureEntry], _ cli: CLI, _ name: String) throws -> String {
        let path = cli.home.appendingPathComponent(name).path
        try CaptureFile.write(entries, to: URL(fileURLWithPath: path))
        return path
    }

    static func replayArguments(_ capture: String, db: String, secret: PairingSecret?) -> [String] {
        ["protocol", "replay", capture, "--db", db, "--from", iso(Date(timeIntervalSince1970: TimeInterval(from))), "--now", iso(now), "--json"]
            + (secret.map { ["--auth-key", $0.text] } ?? [])
    }

    @Test(arguments: ReplayCLITests.dialects)
    func aSyncsCaptureReplaysIntoANewDatabaseWithTheSameRecords(dialect: Dialect) async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let recorded = try await Self.recordSync(dialect, in: cli.home)
        #expect(!recorded.records.isEmpty)
        let capture = try Self.write(recorded.entries, cli, "\(dialect).jsonl")
        let db = cli.home.appendingPathComponent("replay-\(dialect).sqlite").path
        let result = try await cli.runDetached(Self.replayArguments(capture, db: db, secret: recorded.secret))
        #expect(result.exited(0), "\(result.summary)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["fetched"] as? Int == recorded.report.fetched)
        #expect(report["heartRateFetched"] as? Int == recorded.report.heartRateFetched)
        #expect(report["watch"] as? String == Self.watch.rawValue)
        #expect(try await GatewayStore(path: db).sleepRecords(watch: Self.watch) == recorded.records)
        if let secret = recorded.secret { #expect(!result.stdout.contains(secret.text) && !result.stderr.contains(secret.text)) }
    }

    @Test func aClockOtherThanTheRecordedOneSaysWhereTheReplayLeftTheCapture() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let recorded = try await Self.recordSync(.npk, in: cli.home)
        let capture = try Self.write(recorded.entries, cli, "npk.jsonl")
        var arguments = Self.replayArguments(capture, db: cli.home.appendingPathComponent("replay.sqlite").path, secret: nil)
        // An hour off: more than the recording lasted, so not a clock that ran while it was recorded.
        arguments[arguments.firstIndex(of: "--now")! + 1] = Self.iso(Self.now.addingTimeInterval(3600))
        let result = try await cli.runDetached(arguments)
        #expect(result.exited(76), "\(result.summary)")
        #expect(result.stderr.contains("the central left the capture: the central wrote its clock \(Int64(Self.now.timeIntervalSince1970) + 3600) where the capture has"),
                "\(result.stderr)")
        #expect(result.stderr.contains("3600 s off, more than the"), "\(result.stderr)")
        #expect(result.stderr.contains("--now"))

        // The range's start is the sync's, not the clock's: another --from still stops it.
        var other = Self.replayArguments(capture, db: cli.home.appendingPathComponent("other.sqlite").path, secret: nil)
        other[other.firstIndex(of: "--from")! + 1] = Self.iso(Date(timeIntervalSince1970: TimeInterval(Self.from - 86_400)))
        let moved = try await cli.runDetached(other)
        #expect(moved.exited(76), "\(moved.summary)")
        #expect(moved.stderr.contains("the central wrote a range start") && moved.stderr.contains("86400 s off"), "\(moved.stderr)")
    }

    @Test func badCapturesAndMissingArgumentsAreClearErrors() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let recorded = try await Self.recordSync(Dialect(rawValue: "huami"), in: cli.home)
        let capture = try Self.write(recorded.entries, cli, "huami.jsonl")
        let db = cli.home.appendingPathComponent("replay.sqlite").path

        let noKey = try await cli.runDetached(Self.replayArguments(capture, db: db, secret: nil))
        #expect(noKey.exited(64), "\(noKey.summary)")
        #expect(noKey.stderr.contains("needs the auth-key its recorded central used; give --auth-key"), "\(noKey.stderr)")

        let shortKey = try await cli.runDetached(Self.replayArguments(capture, db: db, secret: nil) + ["--auth-key", "0011"])
        #expect(shortKey.exited(64), "\(shortKey.summary)")
        #expect(!shortKey.stderr.contains("0011"), "the key as typed is not repeated")

        let other = try await cli.runDetached(Self.replayArguments(capture, db: db, secret: recorded.secret) + ["--dialect", "npk"])
        #expect(other.exited(64), "\(other.summary)")
        #expect(other.stderr.contains("holds the huami dialect's exchange, not npk's; run it again with --dialect huami"), "\(other.stderr)")

        let text = try String(contentsOfFile: capture, encoding: .utf8)
        let truncated = cli.home.appendingPathComponent("truncated.jsonl").path
        try Data(text.dropLast(40).utf8).write(to: URL(fileURLWithPath: truncated))
        let cut = try await cli.runDetached(Self.replayArguments(truncated, db: db, secret: recorded.secret))
        #expect(cut.exited(65), "\(cut.summary)")
        #expect(cut.stderr.contains("the capture is unreadable: line"), "\(cut.stderr)")

        let unnamed = try Self.write(recorded.entries.map { var entry = $0; entry.dialect = nil; return entry }, cli, "unnamed.jsonl")
        let noDialect = try await cli.runDetached(Self.replayArguments(unnamed, db: db, secret: recorded.secret))
        #expect(noDialect.exited(64), "\(noDialect.summary)")
        #expect(noDialect.stderr.contains("does not name its dialect"), "\(noDialect.stderr)")

        let empty = try Self.write([], cli, "empty.jsonl")
        let nothing = try await cli.runDetached(Self.replayArguments(empty, db: db, secret: nil))
        #expect(nothing.exited(65), "\(nothing.summary)")
        #expect(nothing.stderr.contains("holds no connection"), "\(nothing.stderr)")

        let missing = try await cli.runDetached(Self.replayArguments(cli.home.appendingPathComponent("absent.jsonl").path, db: db, secret: nil))
        #expect(missing.exited(66), "\(missing.summary)")

        #expect(!FileManager.default.fileExists(atPath: db), "no failed replay left a database behind")
        try Data().write(to: URL(fileURLWithPath: db))
        let existing = try await cli.runDetached(Self.replayArguments(capture, db: db, secret: recorded.secret))
        #expect(existing.exited(64), "\(existing.summary)")
        #expect(existing.stderr.contains("exists; a replay stores into a new database"), "\(existing.stderr)")
    }

    /// The captures `protocol replay --help`'s examples play (each family's `protocol-spec/<family>/captures/`):
    /// what the simulated ring's and NPK watch's syncs record today, their times aside, so a change of
    /// what a central writes shows here before a person's capture stops replaying.
    /// TSGATEWAY_WRITE_REPLAY_EXAMPLES=1 writes them anew.
    @Test(arguments: [(Dialect.qring, "qring/captures/qring-sync.jsonl"), (Dialect.npk, "npk/captures/npk-sync.jsonl")])
    func theHelpExamplesCapturesAreWhatTheSimulatedSyncsRecord(dialect: Dialect, file: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replay-example-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorded = try await Self.recordSync(dialect, in: directory)
        let committed = Self.repository.appendingPathComponent("protocol-spec/\(file)")
        if ProcessInfo.processInfo.environment["TSGATEWAY_WRITE_REPLAY_EXAMPLES"] == "1" {
            try CaptureFile.write(recorded.entries.map { var entry = $0; entry.time = 0; return entry }, to: committed)
        }
        // The central's closing disconnect reaches the recording after the sync returns, or not yet.
        func untimed(_ entries: [CaptureEntry]) -> [CaptureEntry] {
            var untimed = entries.map { var entry = $0; entry.time = 0; return entry }
            while untimed.last?.direction == .disconnected { untimed.removeLast() }
            return untimed
        }
        let (stored, recordedNow) = (untimed(try CaptureFile.read(from: committed)), untimed(recorded.entries))
        let differing = stored.indices.first { $0 >= recordedNow.count || stored[$0] != recordedNow[$0] }
        let first = differing.map { "line \($0 + 1): committed \(stored[$0]), recorded \($0 < recordedNow.count ? "\(recordedNow[$0])" : "nothing")" }
            ?? "\(stored.count) against \(recordedNow.count) entries"
        #expect(stored == recordedNow, "\(first); \(file) is not what the simulated \(dialect) records now; if the central's writes changed on purpose, run this test with TSGATEWAY_WRITE_REPLAY_EXAMPLES=1")
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
