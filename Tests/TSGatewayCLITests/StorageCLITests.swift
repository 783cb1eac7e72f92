import Foundation
import TSModels
import TSStore
import TSTestSupport
import Testing

/// `sleep sync` with its database on a real file system that is full or read-only (`ScratchDisk`:
/// tmpfs in a private mount namespace): a clear refusal with its own exit status, nothing
/// acknowledged to the watch, and once the disk takes writes again the next sync stores every
/// record, once.
@Suite("sleep sync on a full or read-only disk", .enabled(if: ScratchDisk.unavailableReason == nil, "\(ScratchDisk.unavailableReason ?? "")"))
struct StorageCLITests {
    static let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-20T08:00:00Z", "TSGATEWAY_CLOCK": "trusted"]
    static let range = ["--from", "2026-10-25", "--to", "2026-11-18"]
    static let watchId = WatchID("00:00:5E:00:53:01")!

    /// `tsgateway ARGUMENTS` in the disk's namespace, with its database on the disk.
    static func run(_ arguments: [String], on disk: ScratchDisk, cli: CLI) async throws -> ChildProcess.Output {
        let (executable, commandLine) = disk.inside([try CLI.requireBinary().path] + arguments + ["--db", disk.mountPoint + "/tsgateway.sqlite", "-v"])
        return try await ChildProcess.run(executable, arguments: commandLine, environment: cli.environment(pinned), currentDirectory: cli.home)
    }

    /// The records the simulated watch holds in `range`: a sync into a database on an ordinary disk.
    static func reference(cli: CLI) async throws -> [SleepItem] {
        let database = cli.home.appendingPathComponent("reference.sqlite").path
        let synced = try await cli.runDetached(["sleep", "sync", "--simulate", "--db", database] + range, environment: pinned)
        try #require(synced.status == 0, "\(synced.summary)")
        return try await GatewayStore(path: database).sleepRecords(watch: watchId)
    }

    func refusedThenRecovered(make unwritable: (ScratchDisk) throws -> Void, undo: (ScratchDisk) throws -> Void,
                              status: TSModels.ExitStatus, message: String) async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let truth = try await Self.reference(cli: cli)
        try #require(truth.count > 100)
        let disk = try ScratchDisk(.tmpfs(kibibytes: 8 * 1024))
        defer { disk.remove() }

        // Three nights first, so the database is there with records in it.
        let first = try await Self.run(["sleep", "sync", "--simulate", "--from", "2026-10-25", "--to", "2026-10-27"], on: disk, cli: cli)
        #expect(first.status == 0, "\(first.summary)")
        #expect(first.stderr.contains("simulated watch: acknowledged ["), "\(first.stderr)")

        try unwritable(disk)
        let refused = try await Self.run(["sleep", "sync", "--simulate"] + Self.range, on: disk, cli: cli)
        #expect(refused.status == status.rawValue, "\(refused.summary)")
        #expect(refused.stderr.contains(message.replacingOccurrences(of: "DIR", with: disk.mountPoint)), "\(refused.stderr)")
        // Refused mid-sync (full) or before the watch was reached (read-only: the database cannot be opened).
        #expect(refused.stderr.contains("simulated watch: nothing acknowledged") || refused.stderr.contains("the watch was not contacted, nothing was acknowledged to it"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("simulated watch: acknowledged"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("Fatal error") && refused.stdout.isEmpty)

        try undo(disk)
        let again = try await Self.run(["sleep", "sync", "--simulate", "--json"] + Self.range, on: disk, cli: cli)
        #expect(again.status == 0, "\(again.summary)")
        #expect(again.stderr.contains("simulated watch: acknowledged ["), "\(again.stderr)")
        let stored = try disk.query(database: disk.mountPoint + "/tsgateway.sqlite",
                                    "SELECT start, stage, duration FROM sleepRecord WHERE watchId = '\(Self.watchId)' ORDER BY start, stage").map { row in
            SleepItem(stage: SleepStage(rawValue: UInt8(row[1])!)!, start: Int64(row[0])!, duration: Int64(row[2])!)
        }
        #expect(stored == truth, "stored \(stored.count) records, the watch holds \(truth.count)")
    }

    @Test("on a full disk: exit 82, 'the disk holding … is full: nothing was acknowledged to the watch; free space and sync again'; after freeing space the next sync stores every record once")
    func full() async throws {
        try await refusedThenRecovered(make: { try $0.fill(leaving: 96 * 1024) }, undo: { try $0.free() }, status: .storageFull,
                                       message: "the disk holding DIR is full: nothing was acknowledged to the watch; free space and sync again")
    }

    @Test("on a read-only disk: exit 83 naming the disk as read-only; remounted read-write, the next sync stores every record once")
    func readOnly() async throws {
        try await refusedThenRecovered(make: { try $0.remountReadOnly() }, undo: { try $0.remountWritable() }, status: .storageReadOnly,
                                       message: "the disk holding DIR is read-only")
    }
}
