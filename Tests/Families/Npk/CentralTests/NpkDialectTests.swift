import Foundation
import Synchronization
import TSDevice
import TSFamilies
import TSFamilyKit
import TSNpkFamily
import TSGATT
import TSModels
import TSNpk
import TSNpkSimulator
import TSNpkWatch
import TSSimulatedHistory
import TSStore
import TSTransport
import TSWatchService
import Testing

/// TopStep's NPK dialect (`NpkWatch`) against the simulated NPK watch over the loopback.
struct NpkRig {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 08:00 UTC, so runs are reproducible.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)

    let simulator: SimulatedNpkWatch
    let watch: NpkWatch
    let store: GatewayStore
    let directory: URL
    let groundTruth: [SleepItem]

    static var configuration: WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { NpkRig.now }
        configuration.requestTimeout = .seconds(1)
        configuration.requestRetries = 2
        configuration.pageIdleTimeout = .seconds(2)
        return configuration
    }

    init(days: Int = 7, faults: FaultInjection = .none, answersTwice: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-npk-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        groundTruth = SleepDataGenerator(seed: 42, timeZone: Self.zone).records(days: days, lastMorning: Self.now, notAfter: Self.now)
        var watchConfiguration = SimulatedNpkWatch.Configuration()
        watchConfiguration.timeZone = Self.zone
        watchConfiguration.answersTwice = answersTwice
        simulator = SimulatedNpkWatch(configuration: watchConfiguration, records: groundTruth)
        watch = try Self.central(for: simulator, faults: faults)
        store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
    }

    static func central(for peripheral: any PeripheralEndpoint, faults: FaultInjection = .none) throws -> NpkWatch {
        NpkWatch(transport: LoopbackTransport(peripheral: peripheral, mtu: try ATTMTU(247), faults: faults), configuration: configuration)
    }

    func sync(_ watch: NpkWatch? = nil, maxReconnects: Int = 20) -> SleepSync {
        var sync = SleepSync(watch: watch ?? self.watch, store: store, watchId: WatchID("AA:BB:CC:DD:EE:0F")!)
        sync.maxReconnects = maxReconnects
        sync.firstBackoff = .milliseconds(20)
        return sync
    }

    func stored() async throws -> [SleepItem] { try await store.sleepRecords(watch: WatchID("AA:BB:CC:DD:EE:0F")!) }

    func cleanUp() async {
        await watch.disconnect()
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite struct NpkDialectTests {
    @Test func connectLogsInBindsWhenRefusedAndDescribesTheWatch() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        let info = try await rig.watch.connect()
        #expect(info.model == "NPK Simulator")
        #expect(info.firmware == "1.0.0-sim")
        #expect(info.dialect == .npk)
        let capabilities = await rig.watch.capabilities
        #expect(capabilities.alarms == .init(maxCount: 8, labelMaxBytes: 63, remarkMaxBytes: 0, snooze: false, maxSmartWindow: 0))
        #expect(capabilities.monitorTypes == [.heartRate, .spo2, .bloodPressure, .stress].sorted())
        #expect(capabilities.sleepSync == .init(selection: .range, paged: true, deletesSynced: false, acknowledges: false))
        // A watch bound to nobody refuses the login (1), so the central binds.
        #expect(await rig.simulator.statistics.logins == 1)
        #expect(await rig.simulator.statistics.binds == 1)
        #expect(await rig.simulator.boundUserId == "tsgateway")
        let clock = try #require(await rig.simulator.clock)
        #expect(clock.timestamp == (try NpkTime.t2000(fromUnix: Int64(NpkRig.now.timeIntervalSince1970))))
        #expect(clock.zoneOffset == Int32(NpkRig.zone.secondsFromGMT(for: NpkRig.now)))

        await rig.watch.disconnect()
        try await rig.watch.connect()
        #expect(await rig.simulator.statistics.logins == 2, "bound now: the login is enough")
        #expect(await rig.simulator.statistics.binds == 1)
        #expect(try await rig.watch.battery() == BatteryStatus(level: 76, state: .discharging))
    }

    @Test func aBindDeclinedOnTheWatchSaysSo() async throws {
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.bindAnswer = .declinedOnWatch
        let watch = try NpkRig.central(for: SimulatedNpkWatch(configuration: configuration, records: []))
        do {
            try await watch.connect()
            Issue.record("a declined bind connected")
        } catch let error as NpkAuthError {
            #expect(error.result == .declinedOnWatch)
            #expect(error.category == .permission)
            #expect(error.description.contains("declined"))
        }
        #expect(await watch.isConnected == false)
    }

    @Test func batteryChangesArriveAsLevels() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let levels = try await rig.watch.batteryLevelChanges()
        await rig.simulator.setBattery(BatteryStatus(level: 41, state: .discharging))
        var iterator = levels.makeAsyncIterator()
        #expect(await iterator.next() == 41)
    }

    @Test func alarmsAreReadSetAndAnEditOnTheWristIsAnnounced() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        let changes = rig.watch.watchSideAlarmChanges()
        try await rig.watch.connect()
        #expect(try await rig.watch.alarms() == [.npkSimulatorDefault])

        let table = [Alarm(slot: 0, label: "Früh", hour: 5, minute: 30, repeatDays: .workdays),
                     Alarm(slot: 3, label: "Weekend", hour: 9, minute: 0, isEnabled: false, repeatDays: .weekend)]
        try await rig.watch.setAlarms(table)
        #expect(await rig.simulator.alarms == table)
        #expect(try await rig.watch.alarms() == table)

        let edited = [Alarm(slot: 1, label: "Wrist", hour: 7, minute: 15)]
        await rig.simulator.editOnWrist(edited)
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == AlarmTableChange(alarms: edited, origin: .watch))
    }

    @Test func aLabelOver63BytesIsInvalidInputAndSnoozeIsNotSupported() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let long = Alarm(slot: 0, label: String(repeating: "ä", count: 32), hour: 6, minute: 0)
        let error = await #expect(throws: NpkError.self) { try await rig.watch.setAlarms([long]) }
        #expect(error?.code == .labelTooLong)
        #expect(error.map { ErrorCategory.of($0) } == .invalidInput)
        let snoozing = Alarm(slot: 0, label: "Work", hour: 6, minute: 0, snoozeAllowed: true)
        let refused = await #expect(throws: NpkError.self) { try await rig.watch.setAlarms([snoozing]) }
        #expect(refused.map { ErrorCategory.of($0) } == .notSupported)
        #expect(await rig.simulator.alarms == [.npkSimulatorDefault], "nothing was sent")
    }

    @Test func monitorSettingsAreReadAndSetAndTemperatureIsNotSupported() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        for type in [MonitorType.heartRate, .spo2, .stress, .bloodPressure] {
            #expect(try await rig.watch.monitorConfig(type) == .factoryDefault(type))
        }
        let spo2 = MonitorConfig(type: .spo2, schedule: MonitorSchedule(enabled: true, startMinute: 60, endMinute: 420, intervalMinutes: 15),
                                 alert: MonitorAlert(enabled: true, upper: 100, lower: 88))
        try await rig.watch.setMonitorConfig(spo2)
        #expect(try await rig.watch.monitorConfig(.spo2) == spo2)
        #expect(try await rig.watch.monitorConfig(.heartRate) == .factoryDefault(.heartRate), "other types unchanged")
        let error = await #expect(throws: (any Error).self) { try await rig.watch.monitorConfig(.temperature) }
        #expect(error.map { ErrorCategory.of($0) } == .notSupported)
    }

    @Test func sevenDaysOfSleepSyncIntoTheStoreAsTheWatchHoldsThem() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        let from = try #require(rig.groundTruth.first).start
        let report = try await rig.sync().run(from: from)
        #expect(report.fetched == rig.groundTruth.count)
        #expect(report.stored == rig.groundTruth.count)
        #expect(report.deletedOnWatch == 0)
        #expect(report.committed == nil, "NPK takes no acknowledgement")
        #expect(try await rig.stored() == rig.groundTruth)
        #expect(await rig.simulator.statistics.sleepSyncs == 1)

        // Nothing new since the cursor: an empty transfer, not an error.
        let again = try await rig.sync().run(from: from)
        #expect(again.fetched == 0)
        #expect(again.stored == 0)
        #expect(await rig.simulator.statistics.sleepSyncs == 2)
        #expect(try await rig.watch.allSleepRecords(start: NpkRig.now.timeIntervalSince1970.asSeconds + 1, end: nil) == [])
    }

    @Test func theSevenDaysThroughTheWatchService() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        let operations = WatchOperations(watch: rig.watch, store: rig.store, watchId: WatchID("AA:BB:CC:DD:EE:0F")!, policy: WatchPolicy(timeZone: NpkRig.zone))
        try await operations.connect()
        let report = try await operations.syncSleep(SyncRequest(from: rig.groundTruth.first!.start))
        #expect(report.stored == rig.groundTruth.count)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func aLinkLostMidSyncThenSyncedAgainCompletesWithoutDuplicates() async throws {
        // The loopback drops the link after 14 packets: the login, bind, device information and
        // clock take 8, so the link goes while the days stream.
        let rig = try NpkRig(days: 7, faults: FaultInjection(disconnectEvery: 14))
        defer { Task { await rig.cleanUp() } }
        let from = try #require(rig.groundTruth.first).start
        let lost = await #expect(throws: WatchError.self) { try await rig.sync(maxReconnects: 0).run(from: from) }
        #expect(lost.map { $0.isRecoverable } == true)
        let partial = try await rig.stored()
        #expect(!partial.isEmpty && partial.count < rig.groundTruth.count, "part of the week was stored before the link went")

        let clean = try NpkRig.central(for: rig.simulator)
        let report = try await rig.sync(clean).run(from: from)
        await clean.disconnect()
        #expect(try await rig.stored() == rig.groundTruth, "every record once")
        #expect(report.stored == rig.groundTruth.count - partial.count)
    }

    @Test func aLinkLostAgainAndAgainIsResumedBySleepSync() async throws {
        let rig = try NpkRig(days: 7, faults: FaultInjection(disconnectEvery: 14))
        defer { Task { await rig.cleanUp() } }
        let report = try await rig.sync().run(from: rig.groundTruth.first!.start)
        #expect(report.reconnects > 0)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func aCorruptedDayIsDroppedByTheReassemblerAndTheSyncAskedAgain() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        await rig.simulator.injectSleepFault(.corruptDay(2))
        let report = try await rig.sync().run(from: rig.groundTruth.first!.start)
        #expect(await rig.watch.streamDrops.crcMismatch == 1)
        #expect(report.reconnects == 1, "the list broke at the damaged day: the sync asked again")
        #expect(await rig.simulator.statistics.sleepSyncs == 2)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func daysThatOvertakeOneAnotherAreTakenInTheirOrder() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        await rig.simulator.injectSleepFault(.swapDays(3))
        let report = try await rig.sync().run(from: rig.groundTruth.first!.start)
        #expect(report.reconnects == 0, "day 4 before day 3 is no gap: the central waits for day 3")
        #expect(await rig.simulator.statistics.sleepSyncs == 1)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func theLastDayOvertakenByTheEndOfTheSyncIsStillTaken() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        // The end of sync overtakes the last day: the central gives that day its grace.
        await rig.simulator.injectSleepFault(.endBeforeLastDay)
        let report = try await rig.sync().run(from: rig.groundTruth.first!.start)
        #expect(report.reconnects == 0)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func aLostDayIsNoticedWhenTheListEndsAndTheSyncAskedAgain() async throws {
        let rig = try NpkRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        await rig.simulator.injectSleepFault(.dropDay(6))
        let report = try await rig.sync().run(from: rig.groundTruth.first!.start)
        #expect(report.reconnects == 1)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func aCorruptedAnswerIsRequestedAgain() async throws {
        let rig = try NpkRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        await rig.simulator.corruptNextAnswer()
        #expect(try await rig.watch.battery().level == 76)
        #expect(await rig.watch.streamDrops.crcMismatch == 1)
        #expect(await rig.watch.retransmissions == 1)
        #expect(await rig.simulator.statistics.retransmissionsReceived == 1)
    }

    @Test func aSleepItemWithANegativeDurationIsCountedAndNotStored() async throws {
        let truth = SleepDataGenerator(seed: 7, timeZone: NpkRig.zone).records(days: 2, lastMorning: NpkRig.now, notAfter: NpkRig.now)
        let bad = SleepItem(stage: .light, start: truth[3].start + 1, duration: -60)
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.timeZone = NpkRig.zone
        let watch = try NpkRig.central(for: SimulatedNpkWatch(configuration: configuration, records: truth + [bad]))
        try await watch.connect()
        let records = try await watch.allSleepRecords(start: truth[0].start, end: nil)
        await watch.disconnect()
        #expect(records == truth)
        #expect(await watch.rejectedSleepItems == 1)
    }

    @Test func aWatchThatNeverAnswersTimesOutAfterItsRetries() async throws {
        let watch = try NpkRig.central(for: SilentPeripheral())
        let error = await #expect(throws: WatchError.self) { try await watch.connect() }
        guard case let .timeout(command, attempts) = error else {
            Issue.record("not a timeout: \(String(describing: error))")
            return
        }
        #expect(command.contains("login"))
        #expect(attempts == 3, "the first try and two retries")
        #expect(await watch.retransmissions == 2)
        #expect(await watch.isConnected == false)
    }

    @Test func theOpenerSimulatesAnNpkWatch() async throws {
        var options = SimulatedWatchOptions()
        options.now = NpkRig.now
        options.timeZone = NpkRig.zone
        options.historyDays = 3
        let opened = try WatchFamilies.openSimulated(options, dialect: .npk, configuration: NpkRig.configuration)
        let simulator = try #require((opened.device as? SimulatedNpkDevice)?.watch)
        #expect(opened.central is NpkWatch)
        #expect(await opened.device.recordCount == simulator.records.count)
        let info = try await opened.central.connect()
        #expect(info.dialect == .npk)
        // The v1 simulator's default alarm as an NPK watch holds it: without snooze.
        #expect(try await opened.central.alarms() == [Alarm(slot: 0, label: "Work", hour: 6, minute: 45, repeatDays: .workdays)])
        await opened.central.disconnect()
        #expect(try WatchFamilies.dialect(named: .npk).gatt == .npk)
    }
}

/// A peripheral that takes every write and answers nothing.
struct SilentPeripheral: PeripheralEndpoint {
    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {}
    func centralWrote(_ chunk: [UInt8]) async {}
    func centralDisconnected() async {}
}

private extension TimeInterval {
    var asSeconds: Int64 { Int64(self) }
}
