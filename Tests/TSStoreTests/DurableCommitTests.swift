import Foundation
import Testing
@testable import TSStore

/// A sync acknowledges records to the watch (SLEEP_COMMIT) once their transaction has committed,
/// so a commit must be on disk when it returns: the writer runs with `synchronous = FULL`, the
/// WAL synced at every commit. GRDB's pool set NORMAL on its writer after the store's own
/// FULL, and power cuts in a VM (scripts/e2e-powercut) lost records the watch had been told were
/// stored.
@Suite struct DurableCommitTests {
    @Test func theWriterSyncsEveryCommitOnANewAndOnAnExistingDatabase() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-durable-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let creating = try GatewayStore(path: path)
        let opened = try GatewayStore(path: path)
        #expect(try await creating.writerSynchronousPragma() == 2, "1 is NORMAL: in WAL mode a commit is synced only at a checkpoint")
        #expect(try await opened.writerSynchronousPragma() == 2)
    }
}
