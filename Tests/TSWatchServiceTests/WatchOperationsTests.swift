import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSSleep
import TSStore
import TSTransport
import TSWatchService
import Testing

/// The watch service's operations on an in-process simulated watch and a scratch database.
struct ServiceRig {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 08:00 UTC, so runs are reproducible.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)

    let operations: WatchOperations
    let simulator: SimulatedWatch
    let directory: URL
    let groundTruth: [SleepItem]

    init(days: Int = 7, policy: WatchPolicy = WatchPolicy(timeZone: ServiceRig.zone)) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-service-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        groundTruth = SleepDataGenerator(seed: 42, timeZone: Self.zone).records(days: days, lastMorning: Self.now, notAfter: Self.now)
        simulator = SimulatedWatch(state: SimulatorState(alarms: [.simulatorDefault], records: groundTruth))
        var configuration = WatchConfiguration()
        configuration.timeZone = Self.zone
        configuration.now = { ServiceRig.now }
        let watch = Watch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)), configuration: configuration)
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        operations = WatchOperations(watch: watch, store: store, watchId: WatchID("AA:BB:CC:DD:EE:01")!, name: "bedroom", policy: policy)
    }

    func cleanUp() async {
        await operations.watch.disconnect()
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("watch operations")
struct WatchOperationsTests {
    @Test("connect records the watch with its configured name and what it reported")
    func connectRecordsTheWatch() async throws {
        let rig = try ServiceRig()
        let info = try await rig.operations.connect()
        let stored = try #require(try await rig.operations.store.watches().first)
        #expect(stored.id == WatchID("AA:BB:CC:DD:EE:01") && stored.name == "bedroom")
        #expect(stored.info?.model == info.model && stored.info?.firmware == info.firmware && stored.info?.capabilities == info.capabilities)
        await rig.cleanUp()
    }

    @Test("alarm reads, writes and watch-side changes are kept in the history with their origin")
    func alarmHistoryOrigins() async throws {
        let rig = try ServiceRig()
        try await rig.operations.connect()
        let read = try await rig.operations.alarms()
        #expect(read == [.simulatorDefault])
        let table = [Alarm(slot: 0, label: "Swim", hour: 6, minute: 15, repeatDays: [.monday, .wednesday])]
        #expect(try await rig.operations.writeAlarms(table))
        #expect(try await rig.operations.writeAlarms(table) == false, "an unchanged table adds no history")
        var edited = table
        edited[0].isEnabled = false
        try await rig.operations.recordWatchSideChange(AlarmTableChange(alarms: edited, origin: .app))
        let history = try await rig.operations.store.alarmHistory(watch: WatchID("AA:BB:CC:DD:EE:01")!)
        #expect(history.map(\.origin) == [.read, .gateway, .app])
        #expect(history.map(\.alarms) == [read, table, edited])
        await rig.cleanUp()
    }

    @Test("a table the watch cannot hold is refused before anything is written, as invalid input")
    func tooLongLabel() async throws {
        let rig = try ServiceRig()
        try await rig.operations.connect()
        let error = await #expect(throws: WatchError.self) {
            try await rig.operations.setAlarms([Alarm(slot: 0, label: String(repeating: "x", count: 40), hour: 7, minute: 0)])
        }
        #expect(error?.category == .invalidInput)
        #expect(try await rig.operations.store.alarmHistory(watch: WatchID("AA:BB:CC:DD:EE:01")!).isEmpty)
        await rig.cleanUp()
    }

    @Test("a sync without a start begins firstSyncDays back, then where the last one began")
    func syncStartFromPolicyThenCursor() async throws {
        var policy = WatchPolicy(timeZone: ServiceRig.zone)
        policy.firstSyncDays = 3
        let rig = try ServiceRig(days: 7, policy: policy)
        try await rig.operations.connect()
        let now = Int64(ServiceRig.now.timeIntervalSince1970), threeDaysBack = now - 3 * 86_400
        let first = try await rig.operations.syncSleep(SyncRequest(to: now))
        let expected = rig.groundTruth.filter { $0.start >= threeDaysBack }
        #expect(!expected.isEmpty && expected.count < rig.groundTruth.count)
        #expect(first.stored == expected.count)
        #expect(try await rig.operations.store.syncCursor(watch: WatchID("AA:BB:CC:DD:EE:01")!)?.rangeStart == threeDaysBack)
        // The next sync without a start begins where this one began, and finds nothing new.
        let second = try await rig.operations.syncSleep(SyncRequest(to: now))
        #expect(second.stored == 0)
        await rig.cleanUp()
    }

    @Test("a sync enqueues finished nights only when the database has an upload setting", arguments: [false, true])
    func outboxFollowsTheStoreSetting(uploads: Bool) async throws {
        let rig = try ServiceRig(days: 7)
        if uploads { try await rig.operations.store.setUploadSetting(UploadSetting(timeZone: ServiceRig.zone, statisticsRule: nil)) }
        try await rig.operations.connect()
        let report = try await rig.operations.syncSleep(SyncRequest(from: rig.groundTruth.first?.start ?? 0, to: Int64(ServiceRig.now.timeIntervalSince1970)))
        #expect(report.stored == rig.groundTruth.count)
        if uploads {
            #expect(report.enqueued >= 5, "a week of finished nights")
        } else {
            #expect(report.enqueued == 0)
        }
        await rig.cleanUp()
    }

    @Test("daily reports use the rule asked for, else the configured one, else the watch's own")
    func ruleResolution() async throws {
        let rig = try ServiceRig(policy: WatchPolicy(timeZone: ServiceRig.zone, statisticsRule: .longestOnly))
        let info = try await rig.operations.connect()
        let day = LocalDate(year: 2025, month: 11, day: 2)
        #expect(try await rig.operations.dailySleep(first: day, last: day, rule: .withoutNap).rule == 0)
        #expect(try await rig.operations.dailySleep(first: day, last: day).rule == 3)
        let unconfigured = WatchPolicy(timeZone: ServiceRig.zone)
        #expect(info.capabilities.statisticsRule != nil && unconfigured.rule(asked: nil, watch: info.capabilities) == info.capabilities.statisticsRule)
        #expect(unconfigured.rule(asked: nil, watch: nil) == .withNap)
        await rig.cleanUp()
    }
}

@Suite("watch selection")
struct WatchSelectionTests {
    static let known = [WatchIdentity(id: WatchID("AA:BB:CC:DD:EE:01")!, name: "bedroom"), WatchIdentity(id: WatchID("AA:BB:CC:DD:EE:02")!, name: nil)]

    @Test("--device names a watch by its address in any case or by its exact name")
    func matching() throws {
        #expect(try WatchSelection.choose("aa:bb:cc:dd:ee:02", among: Self.known)?.id == WatchID("AA:BB:CC:DD:EE:02"))
        #expect(try WatchSelection.choose("bedroom", among: Self.known)?.id == WatchID("AA:BB:CC:DD:EE:01"))
        #expect(try WatchSelection.choose("Bedroom", among: Self.known) == nil)
    }

    @Test("without --device: the only watch, or an error naming the choices")
    func defaults() throws {
        #expect(try WatchSelection.choose(nil, among: [Self.known[0]])?.id == WatchID("AA:BB:CC:DD:EE:01"))
        #expect(throws: WatchSelectionError.noneKnown) { try WatchSelection.choose(nil, among: []) }
        let several = #expect(throws: WatchSelectionError.self) { try WatchSelection.choose(nil, among: Self.known) }
        #expect(several == .several(Self.known) && several?.category == .deviceNotFound)
    }
}

@Suite("a protocol-v1 watch restarting")
struct RestartingWatchTests {
    @Test("a watch that spoke protocol v1 and connects without its service is a connect to retry, not a new kind of watch")
    func missingServiceIsUnavailable() async throws {
        let rig = try ServiceRig()
        try await rig.operations.connect()
        await rig.operations.watch.disconnect()
        // The same watch, its GATT server up again but without the protocol v1 service yet.
        let restarting = Watch(transport: LoopbackTransport(peripheral: rig.simulator, mtu: try ATTMTU(247), hasProtocolV1: false))
        let operations = WatchOperations(watch: restarting, store: rig.operations.store, watchId: rig.operations.watchId, policy: rig.operations.policy)
        let error = await #expect(throws: WatchError.self) { try await operations.connect() }
        #expect(error?.category == .unavailable)
        #expect(try await rig.operations.store.watches().first?.info?.capabilities.sleepSync != nil, "what the store knows stays")
        await rig.cleanUp()
    }
}
