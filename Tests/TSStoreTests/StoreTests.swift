import Foundation
import GRDB
import Testing
import TSModels
import TSStore

private let storedWatch = WatchID("AA:BB:CC:DD:EE:01")!
private let watchA = WatchID("00:00:5E:00:53:0A")!
private let watchB = WatchID("00:00:5E:00:53:0B")!
private let watchW = WatchID("00:00:5E:00:53:77")!

@Suite struct StoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-store-\(UUID())/db.sqlite").path

    @Test func databaseFilesAreReadableByTheOwnerOnly() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        try await store.storeSleepRecords([SleepItem(stage: .deep, start: 1_000, duration: 60)], watch: watchW, cursor: nil)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file) has mode \(String(mode ?? 0, radix: 8))")
        }
        let directoryMode = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
    }

    @Test func recordsAreUniquePerWatchStartAndStage() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let records = [SleepItem(stage: .light, start: 100, duration: 60), SleepItem(stage: .deep, start: 100, duration: 30)]
        #expect(try await store.storeSleepRecords(records, watch: watchA, cursor: nil) == 2)
        #expect(try await store.storeSleepRecords(records, watch: watchA, cursor: nil) == 0)
        #expect(try await store.storeSleepRecords(records, watch: watchB, cursor: nil) == 2)
        // A revised duration replaces the stored one instead of adding a record.
        #expect(try await store.storeSleepRecords([SleepItem(stage: .light, start: 100, duration: 90)], watch: watchA, cursor: nil) == 0)
        #expect(try await store.sleepRecords(watch: watchA) == [SleepItem(stage: .light, start: 100, duration: 90), SleepItem(stage: .deep, start: 100, duration: 30)])
        #expect(try await store.countSleepRecords(watch: watchA, start: 100, end: 101) == 2)
        #expect(try await store.countSleepRecords(watch: watchA, start: 0, end: 100) == 0)
    }

    @Test func alarmSnapshotsKeepAHistoryOfChangesOnly() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let first = [Alarm(slot: 0, label: "Work", hour: 7, minute: 0)]
        #expect(try await store.saveAlarmSnapshot(first, watch: watchW, origin: .read))
        #expect(try await store.saveAlarmSnapshot(first, watch: watchW, origin: .read) == false)
        let second = [Alarm(slot: 0, label: "Work", hour: 7, minute: 30)]
        #expect(try await store.saveAlarmSnapshot(second, watch: watchW, origin: .watch))
        let history = try await store.alarmHistory(watch: watchW)
        #expect(history.map(\.origin) == [.read, .watch])
        #expect(history.map(\.alarms) == [first, second])
    }

    /// The soak saw it: a read reached the watch just after an edit on the wrist and was stored
    /// before the edit's announcement, which then found its table already there, as read.
    @Test func anAnnouncedEditTakesOverTheReadOfItsTable() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let before = [Alarm(slot: 0, label: "Work", hour: 7, minute: 0)]
        let edited = [Alarm(slot: 0, label: "Work", hour: 7, minute: 5)]
        #expect(try await store.saveAlarmSnapshot(before, watch: watchW, origin: .gateway))
        #expect(try await store.saveAlarmSnapshot(edited, watch: watchW, origin: .read))
        #expect(try await store.saveAlarmSnapshot(edited, watch: watchW, origin: .watch))
        #expect(try await store.saveAlarmSnapshot(edited, watch: watchW, origin: .watch) == false, "one snapshot an edit")
        #expect(try await store.saveAlarmSnapshot(edited, watch: watchW, origin: .read) == false, "a later read changes nothing")
        #expect(try await store.saveAlarmSnapshot(before, watch: watchW, origin: .read))
        #expect(try await store.saveAlarmSnapshot(before, watch: watchW, origin: .gateway) == false, "the gateway writing the table the watch has changes nothing")
        let history = try await store.alarmHistory(watch: watchW)
        #expect(history.map(\.origin) == [.gateway, .watch, .read])
        #expect(history.map(\.alarms) == [before, edited, before])
    }

    @Test func monitorConfigsAndWatchesPersistAcrossReopening() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try GatewayStore(path: path)
            try await store.saveWatch(id: storedWatch, name: "Wrist", info: DeviceInfo(model: "M", firmware: "F", capabilities: .init(
                alarms: .init(maxCount: 8, labelMaxBytes: 32, snooze: true), monitorTypes: [.sleep], statisticsRule: .longestNight, naps: true)))
            try await store.saveMonitorConfig(MonitorConfig(type: .sleep, schedule: MonitorSchedule(enabled: true)), watch: storedWatch)
            try await store.setSyncCursor(SyncCursor(rangeStart: 10, upTo: 20, committedUpTo: 15), watch: storedWatch)
        }
        let reopened = try GatewayStore(path: path)
        let watches = try await reopened.watches()
        #expect(watches.map(\.id) == [storedWatch])
        #expect(watches.first?.info?.capabilities.statisticsRule == .longestNight)
        #expect(try await reopened.monitorConfigs(watch: storedWatch).map(\.type) == [.sleep])
        #expect(try await reopened.syncCursor(watch: storedWatch) == SyncCursor(rangeStart: 10, upTo: 20, committedUpTo: 15))
    }

    @Test func aStoredWatchIdThatIsNoAddressIsACorruptValue() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        try await store.storeSleepRecords([SleepItem(stage: .deep, start: 1_000, duration: 60)], watch: watchW, cursor: nil)
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "INSERT INTO watch (id, firstSeen, lastSeen) VALUES ('bedroom', 0, 0)") }
        await #expect { try await store.watches() } throws: { error in
            (error as? StoreError).map { "\($0)".contains("watch id \"bedroom\"") } ?? false
        }
        #expect(try await store.sleepRecords(watch: watchW).count == 1, "the watch's own records still read")
    }

    @Test func anUnusablePathGivesAClearError() throws {
        #expect { try GatewayStore(path: "/proc/tsgateway/nope.sqlite") } throws: { "\($0)".contains("cannot open the database /proc/tsgateway/nope.sqlite") }
    }

    @Test func defaultPathFollowsXDG() {
        #expect(GatewayStore.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/tsgateway/tsgateway.sqlite")
        #expect(GatewayStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/tsgateway/tsgateway.sqlite")
        #expect(GatewayStore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.local/share/tsgateway/tsgateway.sqlite")
    }
}
