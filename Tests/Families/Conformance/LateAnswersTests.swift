import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore
import TSTransport
import Testing

/// Every family's central against its simulated device whose answers all come after the write
/// they answer has returned, later than a request timeout (issue 47: a Huami band nobody here
/// wrote answered so, and the central gave up on answers that came). The same journey (connect,
/// alarms, a sleep sync into a store) runs with the answers at once and late; what the central
/// reports and stores must be the same, and the late run must not have needed a reconnect.
@Suite("every family's central takes answers that come late after the write")
struct LateAnswersTests {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 08:00 UTC, so both runs see the same history.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    static let watchId = WatchID("AA:BB:CC:DD:EE:47")!
    /// Twice a request timeout (below): an answer a central that waits one request timeout misses.
    static let lateness: Duration = .milliseconds(1000)

    /// What one journey saw; errors by their category, as the front doors report them.
    struct Journey: Equatable, CustomStringConvertible {
        var model: String
        var dialect: Dialect
        var alarms: String
        var sleepRecords: [SleepItem]
        var sleep: String
        var heartRateSamples: Int

        var description: String {
            "\(dialect) \(model): alarms \(alarms); sleep \(sleep), \(sleepRecords.count) records stored; \(heartRateSamples) heart-rate samples"
        }
    }

    static func journey(_ dialect: Dialect, lateness: Duration) async throws -> (Journey, reconnects: Int) {
        var options = SimulatedWatchOptions()
        options.now = now
        options.timeZone = zone
        options.historyDays = 3
        options.answerLateness = lateness
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        // An answer 1 s late misses a central that waits one request timeout (500 ms); the whole
        // wait (v1 and NPK: the sends of one request; QRing and Huami: `singleAttemptTimeout`) is
        // 10 × 500 ms, so a starved test process has 4 s to spare. v1 and NPK send a request
        // again after each 500 ms, so their watches answer most requests twice, and an answer
        // often comes just as a wait ends (the NPK central lost those: the flake ledger).
        configuration.requestTimeout = .milliseconds(500)
        configuration.requestRetries = 9
        configuration.pageIdleTimeout = .seconds(3)
        let opened = try WatchFamilies.openSimulated(options, dialect: dialect, configuration: configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-late-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)

        let info = try await opened.central.connect()
        let alarms: String
        do { alarms = "\(try await opened.central.alarms().count) held" } catch { alarms = Self.category(of: error) }
        var sync = SleepSync(watch: opened.central, store: store, watchId: watchId)
        sync.firstBackoff = .milliseconds(20)
        var reconnects = 0
        let sleep: String
        do {
            let report = try await sync.run(from: Int64(now.timeIntervalSince1970) - 3 * 86_400)
            reconnects = report.reconnects
            sleep = report.heartRateError.map { "synced; heart rate failed: \($0)" } ?? "synced"
        } catch {
            sleep = Self.category(of: error)
        }
        let samples = try await store.heartRate(watch: watchId).count
        let journey = Journey(model: info.model, dialect: info.dialect ?? dialect, alarms: alarms,
                              sleepRecords: try await store.sleepRecords(watch: watchId), sleep: sleep, heartRateSamples: samples)
        await opened.central.disconnect()
        return (journey, reconnects)
    }

    static func category(of error: any Error) -> String {
        (error as? any CategorizedError).map { "\($0.category)" } ?? "\(type(of: error))"
    }

    @Test("connect, alarms and a sleep sync end as they do with answers at once", arguments: WatchFamilies.builtIn.filter { $0.simulated != nil }.map(\.name))
    func theJourneyEndsAsWithAnswersAtOnce(_ dialect: Dialect) async throws {
        let (prompt, _) = try await Self.journey(dialect, lateness: .zero)
        let (late, reconnects) = try await Self.journey(dialect, lateness: Self.lateness)
        #expect(prompt.sleep != "synced" || !prompt.sleepRecords.isEmpty, "a family that syncs has nights to sync: \(prompt)")
        #expect(late == prompt, "late: \(late)\nat once: \(prompt)")
        #expect(reconnects == 0, "a late answer must not cost the link")
    }
}
