import Foundation
import GRDB
import Testing
import TSModels
import TSStore

private let watchW = WatchID("00:00:5E:00:53:77")!

/// Two processes writing one database (a cron `sleep sync` while someone runs another): the
/// second waits for the first instead of failing with "database is locked".
@Suite struct StoreConcurrencyTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-store-\(UUID())/db.sqlite").path
    let record = SleepItem(stage: .deep, start: 1_000, duration: 60)

    /// A connection of its own (as another process has) holding an open write transaction.
    final class WriteLockHolder: Sendable {
        let queue: DatabaseQueue

        init(path: String) throws {
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true  // the transaction stays open between calls
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "INSERT INTO watch (id, firstSeen, lastSeen) VALUES ('00:00:5E:00:53:0D', 0, 0)")
            }
        }

        func commit() throws {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        }
    }

    /// Set once the store's write returned.
    actor Completion {
        private(set) var isDone = false
        func finish() { isDone = true }
    }

    /// Two processes opening a database that does not exist yet (`tsgateway serve` starting
    /// while a script runs `tsgateway hr history --db` on the same file, seen in the e2e suite):
    /// both migrate it, and the one that finds a migration already applied by the other opens
    /// the store instead of failing with "table … already exists". Each store here has its own
    /// connections, as another process has.
    @Test func storesOpenedAtOnceOnANewDatabaseAllOpenIt() async throws {
        let directory = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var failures: [String] = []
        for round in 0..<20 {
            let fresh = "\(directory)/fresh-\(round).sqlite"
            let opened = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        do { _ = try GatewayStore(path: fresh); return nil } catch { return "\(error)" }
                    }
                }
                return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            failures += opened
            #expect(try GatewayStore(path: fresh).path == fresh)
        }
        #expect(failures.isEmpty, "\(failures.count) of 80 stores did not open: \(failures.first ?? "")")
    }

    @Test func aSecondWriterWaitsUntilTheFirstCommitsAndThenWrites() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let holder = try WriteLockHolder(path: path)
        let completion = Completion()
        let record = record
        let write = Task {
            defer { Task { await completion.finish() } }
            return try await store.storeSleepRecords([record], watch: watchW, cursor: nil)
        }
        // Give the write time to reach the lock; it cannot get past it while the holder's transaction is open.
        try await Task.sleep(for: .milliseconds(300))
        #expect(await completion.isDone == false, "the write finished while another connection held the write lock")
        try holder.commit()
        #expect(try await write.value == 1)
        #expect(try await store.sleepRecords(watch: watchW) == [record])
        #expect(try await store.watches().map(\.id).contains(WatchID("00:00:5E:00:53:0D")!))
    }

    @Test func aWriterThatCannotGetTheLockInTimeReportsTheBusyDatabase() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path, busyTimeout: .milliseconds(50))
        let holder = try WriteLockHolder(path: path)
        let path = path, record = record
        await #expect {
            try await store.storeSleepRecords([record], watch: watchW, cursor: nil)
        } throws: { error in
            guard case let StoreError.busy(busyPath) = error else { return false }
            return busyPath == path
        }
        try holder.commit()
        // Once the other writer is done, the same store writes again.
        #expect(try await store.storeSleepRecords([record], watch: watchW, cursor: nil) == 1)
    }
}
