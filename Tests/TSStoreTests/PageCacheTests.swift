import Foundation
import Testing
import TSModels
@testable import TSStore

/// `tsgateway serve` writes heart-rate samples all day and rarely reads them back: each store
/// connection keeps at most `GatewayStore.pageCacheKiB` of pages, so the daemon's memory stops
/// growing once that is full instead of after hours at 2 MiB a connection.
/// A store that creates its database opens it again, bounded, once it is made.
@Suite struct PageCacheTests {
    @Test func heartRateWritesKeepTheWritersPageCacheWithinItsBound() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-cache-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        // The store that makes the database: `tsgateway serve` on a new data directory.
        let store = try GatewayStore(path: path)
        // Eight watches at one sample a second for 75 minutes, 100 samples a transaction.
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for batch in 0..<360 {
            let samples = (0..<100).map { HeartRateSample(time: start + Double(batch * 100 + $0) / 8, bpm: 50 + $0 % 30, rrIntervals: [1000]) }
            try await store.storeHeartRate(samples, watch: WatchID(String(format: "00:00:5E:00:54:%02X", batch % 8))!)
        }
        let bound = GatewayStore.pageCacheKiB * 1024
        let file = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        // The written pages are several times what the cache may hold …
        #expect(file + wal > 4 * bound, "only \(file + wal) bytes written")
        // … and the cache holds no more than its bound (SQLite's default allowed 2 MiB).
        let cached = try await store.writerPageCacheBytes()
        #expect(cached <= bound + bound / 4, "the writer's page cache holds \(cached) bytes; the bound is \(bound)")
    }

    @Test func theStoreThatCreatesTheDatabaseHasTheBoundAsWellAsTheNextOne() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-cache-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let creating = try GatewayStore(path: path)
        let opened = try GatewayStore(path: path)
        #expect(try await creating.writerCacheSizePragma() == -GatewayStore.pageCacheKiB, "SQLite's default is -2000 (KiB)")
        #expect(try await opened.writerCacheSizePragma() == -GatewayStore.pageCacheKiB)
    }
}
