import Foundation
import Testing
import TSModels
import TSStore

@Suite struct StoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-store-\(UUID())/db.sqlite").path

    @Test func databaseFilesAreReadableByTheOwnerOnly() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        try await store.storeSleepRecords([SleepItem(stage: .deep, start: 1_000, duration: 60)], watch: "w", cursor: nil)
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
        #expect(try await store.storeSleepRecords(records, watch: "a", cursor: nil) == 2)
        #expect(try await store.storeSleepRecords(records, watch: "a", cursor: nil) == 0)
        #expect(try await store.storeSleepRecords(records, watch: "b", cursor: nil) == 2)
        // A revised duration replaces the stored one instead of adding a record.
        #expect(try await store.storeSleepRecords([SleepItem(stage: .light, start: 100, duration: 90)], watch: "a", cursor: nil) == 0)
        #expect(try await store.sleepRecords(watch: "a") == [SleepItem(stage: .light, start: 100, duration: 90), SleepItem(stage: .deep, start: 100, duration: 30)])
        #expect(try await store.countSleepRecords(watch: "a", start: 100, end: 101) == 2)
        #expect(try await store.countSleepRecords(watch: "a", start: 0, end: 100) == 0)
    }

    @Test func alarmSnapshotsKeepAHistoryOfChangesOnly() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try GatewayStore(path: path)
        let first = [Alarm(slot: 0, label: "Work", hour: 7, minute: 0)]
        #expect(try await store.saveAlarmSnapshot(first, watch: "w", origin: .read))
        #expect(try await store.saveAlarmSnapshot(first, watch: "w", origin: .read) == false)
        let second = [Alarm(slot: 0, label: "Work", hour: 7, minute: 30)]
        #expect(try await store.saveAlarmSnapshot(second, watch: "w", origin: .watch))
        let history = try await store.alarmHistory(watch: "w")
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
        #expect(try await store.saveAlarmSnapshot(before, watch: "w", origin: .gateway))
        #expect(try await store.saveAlarmSnapshot(edited, watch: "w", origin: .read))
        #expect(try await store.saveAlarmSnapshot(edited, watch: "w", origin: .watch))
        #expect(try await store.saveAlarmSnapshot(edited, watch: "w", origin: .watch) == false, "one snapshot an edit")
        #expect(try await store.saveAlarmSnapshot(edited, watch: "w", origin: .read) == false, "a later read changes nothing")
        #expect(try await store.saveAlarmSnapshot(before, watch: "w", origin: .read))
        #expect(try await store.saveAlarmSnapshot(before, watch: "w", origin: .gateway) == false, "the gateway writing the table the watch has changes nothing")
        let history = try await store.alarmHistory(watch: "w")
        #expect(history.map(\.origin) == [.gateway, .watch, .read])
        #expect(history.map(\.alarms) == [before, edited, before])
    }

    @Test func monitorConfigsAndWatchesPersistAcrossReopening() async throws {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try GatewayStore(path: path)
            try await store.saveWatch(id: "AA:BB", name: "Wrist", info: DeviceInfo(model: "M", firmware: "F", capabilities: .init(
                maxAlarms: 8, labelMaxBytes: 32, remarkMaxBytes: 0, statisticsRule: .longestNight, supportsNaps: true,
                deletesSyncedRecords: false, supportsLiveSleep: false, monitorTypes: [.sleep])))
            try await store.saveMonitorConfig(MonitorConfig(type: .sleep, schedule: MonitorSchedule(enabled: true)), watch: "AA:BB")
            try await store.setSyncCursor(SyncCursor(rangeStart: 10, upTo: 20, committedUpTo: 15), watch: "AA:BB")
        }
        let reopened = try GatewayStore(path: path)
        let watches = try await reopened.watches()
        #expect(watches.map(\.id) == ["AA:BB"])
        #expect(watches.first?.info?.capabilities.statisticsRule == .longestNight)
        #expect(try await reopened.monitorConfigs(watch: "AA:BB").map(\.type) == [.sleep])
        #expect(try await reopened.syncCursor(watch: "AA:BB") == SyncCursor(rangeStart: 10, upTo: 20, committedUpTo: 15))
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
