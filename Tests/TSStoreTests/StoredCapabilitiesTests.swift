import Foundation
import Testing
import TSModels
@testable import TSStore

/// The `watch` table's capabilities column: `WatchCapabilities` now; protocol v1's DEVICE_INFO
/// terms in rows written before it was the one capability type.
@Suite struct StoredCapabilitiesTests {
    @Test("a row in the earlier DEVICE_INFO terms reads as the same watch: alarms, monitors, rule, v1.1's parts, a sync that commits")
    func earlierRowsRead() throws {
        let v1 = #"{"maxAlarms": 10, "labelMaxBytes": 32, "remarkMaxBytes": 64, "statisticsRule": 1, "supportsNaps": true, "deletesSyncedRecords": false, "supportsLiveSleep": true, "monitorTypes": ["heartRate"], "maxSmartWindow": 45, "supportsRing": true}"#
        let read = try StoredCapabilities.decode(v1)
        #expect(read.alarmLimits == AlarmLimits(maxAlarms: 10, labelMaxBytes: 32, remarkMaxBytes: 64, maxSmartWindow: 45))
        #expect(read.monitorTypes == [.heartRate] && read.statisticsRule == StatisticsRule(rawValue: 1) && read.naps && read.liveStages)
        #expect(read.ring && !read.alarmAlerts)
        #expect(read.sleepSync == .init(selection: .range, paged: true, deletesSynced: false, acknowledges: true))
        // Before protocol v1.1: its three keys absent.
        let beforeV1_1 = #"{"maxAlarms": 10, "labelMaxBytes": 32, "remarkMaxBytes": 64, "statisticsRule": 1, "supportsNaps": true, "deletesSyncedRecords": true, "supportsLiveSleep": false, "monitorTypes": []}"#
        let older = try StoredCapabilities.decode(beforeV1_1)
        #expect(older.maxSmartWindow == 0 && !older.ring && !older.alarmAlerts && older.sleepSync?.deletesSynced == true)
        // The earlier `none`: a watch of the standard services only, which synced no sleep.
        let none = #"{"maxAlarms": 0, "labelMaxBytes": 0, "remarkMaxBytes": 0, "statisticsRule": 1, "supportsNaps": false, "deletesSyncedRecords": false, "supportsLiveSleep": false, "monitorTypes": []}"#
        #expect(try StoredCapabilities.decode(none) == .nothing)
    }

    @Test("a row in the present terms reads back equal, through the store")
    func presentRowsRoundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stored-capabilities-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        let capabilities = WatchCapabilities(alarms: .init(maxCount: 5, labelMaxBytes: 0, snooze: true), monitorTypes: [.heartRate],
                                             sleepSync: .init(selection: .range, paged: false, deletesSynced: true, acknowledges: true),
                                             battery: true, clock: true, heartRate: true, heartRateHistory: true)
        let id = WatchID("AA:BB:CC:DD:EE:10")!
        try await store.saveWatch(id: id, name: nil, info: DeviceInfo(model: "band", firmware: "1", capabilities: capabilities, dialect: Dialect(rawValue: "huami")))
        #expect(try await store.watches().first?.info?.capabilities == capabilities)
    }

    @Test("a row that is neither shape is an error, not a watch without capabilities")
    func neitherShapeFails() {
        #expect(throws: (any Error).self) { try StoredCapabilities.decode(#"{"alarms": 3}"#) }
    }
}
