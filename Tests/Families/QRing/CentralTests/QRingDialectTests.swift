import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSQRingFamily
import TSGATT
import TSModels
import TSQRing
import TSQRingSimulator
import TSQRingWatch
import TSStore
import TSTransport
import TSWatchService
import Testing

/// QRing rings (`QRingWatch`) against the simulated ring over the loopback's two pairs.
struct QRingRig {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 08:00 UTC (09:00 in Berlin), so runs are reproducible.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    static let watchId = WatchID("AA:BB:CC:DD:EE:21")!
    /// What `sleep sync --since 7d` asks for at `now`.
    static let from = Int64(now.timeIntervalSince1970) - 7 * 86400

    let ring: SimulatedRing
    let watch: QRingWatch
    let store: GatewayStore
    let directory: URL

    static var configuration: WatchConfiguration { configuration(now: now) }

    static func configuration(now: Date) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        configuration.requestTimeout = .seconds(2)
        // The dropped-reply tests wait this long; shorter would let a busy machine cut a healthy reply.
        configuration.pageIdleTimeout = .seconds(2)
        return configuration
    }

    /// The rig's clock; `from` is a week before it.
    let now: Date
    var from: Int64 { Int64(now.timeIntervalSince1970) - 7 * 86400 }

    init(days: Int = 7, faults: FaultInjection = .none, chunkSize: Int? = nil, now: Date = QRingRig.now) throws {
        self.now = now
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-qring-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var ringConfiguration = SimulatedRing.Configuration()
        ringConfiguration.bigDataChunkSize = chunkSize
        ring = SimulatedRing(configuration: ringConfiguration, history: RingHistory(seed: 42, timeZone: Self.zone, now: now, days: days))
        watch = try Self.central(for: ring, faults: faults, now: now)
        store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
    }

    static func central(for ring: SimulatedRing, faults: FaultInjection = .none, now: Date = QRingRig.now) throws -> QRingWatch {
        QRingWatch(transport: LoopbackTransport(peripheral: ring, mtu: try ATTMTU(247), faults: faults, standard: ring,
                                                name: ring.configuration.name, secondChannel: ring),
                   configuration: configuration(now: now))
    }

    /// The records a sync from `from` must store: every stretch with data of the nights the ring holds.
    var groundTruth: [SleepItem] {
        ring.history.nights.flatMap(\.items).filter { $0.start >= from }.sorted { $0.start < $1.start }
    }

    func sync(maxReconnects: Int = 20) -> SleepSync {
        var sync = SleepSync(watch: watch, store: store, watchId: Self.watchId)
        sync.maxReconnects = maxReconnects
        sync.firstBackoff = .milliseconds(20)
        return sync
    }

    func stored() async throws -> [SleepItem] { try await store.sleepRecords(watch: Self.watchId) }
    func storedHeartRate() async throws -> [HeartRateSample] { try await store.heartRate(watch: Self.watchId) }

    func cleanUp() async {
        await watch.disconnect()
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite struct QRingDialectTests {
    @Test func connectDescribesTheRingAndSetsItsClockToLocalTime() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        let info = try await rig.watch.connect()
        #expect(info.model == "R02_5A1C")
        #expect(info.firmware == "R02_3.00.06_240523")
        #expect(info.standard?.hardwareRevision == "R02_V3.0")
        #expect(info.dialect == .qring)
        #expect(info.capabilities.maxAlarms == 0)
        let capabilities = await rig.watch.capabilities
        #expect(capabilities.alarms == nil)
        #expect(capabilities.monitorTypes == [.heartRate, .spo2, .stress])
        #expect(capabilities.sleepSync == .init(selection: .range, paged: true, deletesSynced: false, acknowledges: false))
        #expect(capabilities.heartRateHistory)
        #expect(capabilities.heartRate)
        // The gateway zone's wall-clock time: 09:00 in Berlin, not 08:00 UTC.
        let clock = try #require(await rig.ring.clock)
        #expect(clock.date == RingDate(year: 2025, month: 11, day: 3))
        #expect(clock.hour == 9 && clock.minute == 0)
        #expect(await rig.watch.newSleepProtocol == true)
        #expect(try await rig.watch.battery() == BatteryStatus(level: 64, state: .discharging))
    }

    @Test func alarmsAreNotSupportedAtOnce() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let sent = await rig.ring.statistics.packetsReceived
        let error = await #expect(throws: WatchError.self) { try await rig.watch.alarms() }
        #expect(error.map { ErrorCategory.of($0) } == .notSupported)
        #expect(ErrorCategory.notSupported.exitStatus == 79)
        await #expect(throws: WatchError.self) { try await rig.watch.setAlarms([]) }
        #expect(await rig.ring.statistics.packetsReceived == sent, "nothing was sent")
    }

    @Test func aWeekOfSleepAndHeartRateSyncsIntoTheStoreAsTheRingHoldsIt() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        let truth = rig.groundTruth
        #expect(truth.count > 50, "a week of nights")
        let report = try await rig.sync().run(from: QRingRig.from)
        #expect(report.fetched == truth.count)
        #expect(report.stored == truth.count)
        #expect(report.committed == nil, "a ring takes no acknowledgement")
        #expect(try await rig.stored() == truth)

        let heartRate = await rig.ring.heartRateSamples(in: QRingRig.from..<Int64(QRingRig.now.timeIntervalSince1970) + 1)
        #expect(heartRate.count > 7 * 280, "a reading every five minutes for a week")
        #expect(report.heartRateFetched == heartRate.count)
        #expect(report.heartRateStored == heartRate.count)
        #expect(try await rig.storedHeartRate() == heartRate)
        #expect(await rig.ring.statistics.heartRateLogRequests == 8, "one log per day of the range, today included")

        let noData = rig.ring.history.nights.flatMap(\.pairs).filter { $0.code == 0 && $0.minutes > 0 }.count
        #expect(await rig.watch.drops.sleepPairs == noData, "stretches without data are counted, not stored")

        // Nothing new: the ring hands over its nights again, the cursor keeps them out.
        let again = try await rig.sync().run(from: QRingRig.from)
        #expect(again.stored == 0)
        #expect(again.heartRateStored == 0)
        #expect(try await rig.stored() == truth)
    }

    /// Berlin's clocks went back at 03:00 CEST on 26 October 2025: the ring's wall clock repeats
    /// an hour that night, and the night's end minute is an hour "early" against its stages.
    @Test func aWeekAcrossTheEndOfDaylightSavingTimeSyncsAsTheRingHoldsIt() async throws {
        let rig = try QRingRig(days: 7, now: Date(timeIntervalSince1970: 1_761_724_800))  // 2025-10-29 08:00 UTC
        defer { Task { await rig.cleanUp() } }
        let nights = rig.ring.history.nights.map { RingDateTime(Date(timeIntervalSince1970: TimeInterval($0.end)), in: QRingRig.zone).date }
        #expect(nights.contains(RingDate(year: 2025, month: 10, day: 26)), "the DST night is in the week")
        let report = try await rig.sync().run(from: rig.from)
        #expect(try await rig.stored() == rig.groundTruth)
        let heartRate = await rig.ring.heartRateSamples(in: rig.from..<Int64(rig.now.timeIntervalSince1970) + 1)
        #expect(report.heartRateStored == heartRate.count)
        #expect(try await rig.storedHeartRate() == heartRate)
    }

    @Test func theWeekThroughTheWatchService() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        let operations = WatchOperations(watch: rig.watch, store: rig.store, watchId: QRingRig.watchId, policy: WatchPolicy(timeZone: QRingRig.zone))
        try await operations.connect()
        let report = try await operations.syncSleep(SyncRequest(from: QRingRig.from))
        #expect(report.stored == rig.groundTruth.count)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func monitorSettingsRoundTripAndWhatTheRingCannotHoldIsRefusedBeforeSending() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let allDay = { (type: MonitorType, enabled: Bool, interval: UInt16) in
            MonitorConfig(type: type, schedule: MonitorSchedule(enabled: enabled, startMinute: 0, endMinute: 1440, intervalMinutes: interval))
        }
        #expect(try await rig.watch.monitorConfig(.heartRate) == allDay(.heartRate, true, 5))
        #expect(try await rig.watch.monitorConfig(.spo2) == allDay(.spo2, true, SwitchedMonitorConfig.intervalMinutes))
        #expect(try await rig.watch.monitorConfig(.stress) == allDay(.stress, false, SwitchedMonitorConfig.intervalMinutes))

        try await rig.watch.setMonitorConfig(allDay(.heartRate, true, 10))
        #expect(await rig.ring.heartRateLogInterval == 10)
        #expect(try await rig.watch.monitorConfig(.heartRate) == allDay(.heartRate, true, 10))
        try await rig.watch.setMonitorConfig(allDay(.stress, true, SwitchedMonitorConfig.intervalMinutes))
        #expect(await rig.ring.switches[.stress] == true)
        #expect(try await rig.watch.monitorConfig(.stress) == allDay(.stress, true, SwitchedMonitorConfig.intervalMinutes))
        #expect(try await rig.watch.isSwitchedOn(.hrv))
        try await rig.watch.setSwitch(.hrv, on: false)
        #expect(await rig.ring.switches[.hrv] == false)

        let sent = await rig.ring.statistics.packetsReceived
        var windowed = allDay(.spo2, false, SwitchedMonitorConfig.intervalMinutes)
        windowed.schedule.startMinute = 480
        let window = await #expect(throws: QRingError.self) { try await rig.watch.setMonitorConfig(windowed) }
        #expect(window?.code == .windowNotSupported)
        #expect(window.map { ErrorCategory.of($0) } == .invalidInput)
        let interval = await #expect(throws: QRingError.self) { try await rig.watch.setMonitorConfig(allDay(.heartRate, true, 90)) }
        #expect(interval?.code == .intervalOutOfRange)
        let uneven = await #expect(throws: WatchError.self) { try await rig.watch.setMonitorConfig(allDay(.heartRate, true, 7)) }
        #expect(uneven.map { ErrorCategory.of($0) } == .invalidInput)
        #expect(await rig.ring.statistics.packetsReceived == sent, "nothing was sent")
        #expect(await rig.ring.switches[.spo2] == true)

        let temperature = await #expect(throws: WatchError.self) { try await rig.watch.monitorConfig(.temperature) }
        #expect(temperature.map { ErrorCategory.of($0) } == .notSupported)
    }

    @Test func batteryPushedByTheRingArrivesAsALevel() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let levels = try await rig.watch.batteryLevelChanges()
        await rig.ring.setBattery(RingBattery(level: 41, charging: false))
        var iterator = levels.makeAsyncIterator()
        #expect(await iterator.next() == 41)
    }

    @Test func realTimeHeartRateSkipsTheEmptyFirstReading() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let measurements = try await rig.watch.heartRateMeasurements(malformed: nil)
        var iterator = measurements.makeAsyncIterator()
        // The simulated ring's first packet carries 0 (no reading yet); its second 67 bpm.
        #expect(await iterator.next()?.bpm == 67)
        #expect(await iterator.next()?.bpm == 74)
    }

    @Test func stepsOfADayAreReadAsTheRingHoldsThem() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        let day = rig.ring.history.today.adding(days: -1)
        let truth = rig.ring.history.steps(day: day)
        #expect(truth.count > 10)
        let intervals = try await rig.watch.steps(daysAgo: 1)
        #expect(intervals.map { SimulatedSteps(quarter: $0.wall.secondOfDay / 900, steps: $0.steps, calories: $0.calories, distanceMeters: $0.distanceMeters) } == truth)
        #expect(intervals.allSatisfy { $0.wall.date == day })
        #expect(try await rig.watch.steps(daysAgo: 30).isEmpty, "before the ring's history: none")
        #expect(await rig.ring.statistics.stepsRequests == 2)
    }

    // MARK: Bad input from the ring

    @Test func anAnswerWithAWrongChecksumIsAProtocolError() async throws {
        let rig = try QRingRig()
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        await rig.ring.inject(.wrongChecksum(command: QRingCommand.battery))
        let error = await #expect(throws: QRingError.self) { try await rig.watch.battery() }
        #expect(error?.code == .checksumMismatch)
        #expect(error.map { ErrorCategory.of($0) } == .protocolError)
        #expect(try await rig.watch.battery().level == 64, "the next answer is read")
    }

    @Test func aSleepReplyWithAWrongCRCIsDroppedCountedAndAskedForAgain() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        await rig.ring.inject(.wrongCRC)
        let report = try await rig.sync().run(from: QRingRig.from)
        #expect(await rig.watch.drops.crcMismatches == 1)
        #expect(report.reconnects == 1)
        #expect(await rig.ring.statistics.sleepRequests == 2)
        #expect(try await rig.stored() == rig.groundTruth, "every record once, none from the damaged reply")
    }

    @Test func aSleepReplyWhoseLengthNeverArrivesIsDroppedCountedAndAskedForAgain() async throws {
        let rig = try QRingRig(days: 7, chunkSize: 20)
        defer { Task { await rig.cleanUp() } }
        await rig.ring.inject(.truncatedBigData)
        let report = try await rig.sync().run(from: QRingRig.from)
        #expect(await rig.watch.drops.incompleteFrames == 1)
        #expect(report.reconnects == 1)
        #expect(try await rig.stored() == rig.groundTruth)
    }

    @Test func aSleepDayThatOverrunsTheReplyIsAnErrorAndNothingIsStored() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        await rig.ring.inject(.sleepDayOverrun)
        let error = await #expect(throws: QRingError.self) { try await rig.sync().run(from: QRingRig.from) }
        #expect(error?.code == .sleepDayOverrun)
        #expect(error.map { ErrorCategory.of($0) } == .protocolError)
        #expect(try await rig.stored().isEmpty)
    }

    /// A packet of a day's log lost on the link (or overtaken, as under EATT): the link is closed,
    /// the sync reconnects and asks again, and the whole history is stored once; the sleep records
    /// of the same sync too. (It was the history's end: "a packet was lost", nothing of it stored.)
    @Test func aHeartRateLogPacketLostOnTheLinkIsAskedAnewOnAFreshLink() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        let whole = try await { () async throws -> Int in
            let clean = try QRingRig(days: 7)
            defer { Task { await clean.cleanUp() } }
            return try await clean.sync().run(from: QRingRig.from).heartRateStored
        }()
        await rig.ring.inject(.dropLogPacket(index: 5))
        let report = try await rig.sync().run(from: QRingRig.from)
        #expect(report.heartRateError == nil, "\(report)")
        #expect(report.reconnects == 1)
        #expect(whole > 0 && report.heartRateStored == whole)
        #expect(try await rig.storedHeartRate().count == whole, "nothing stored twice")
        #expect(report.stored > 0)
        #expect(try await rig.stored().count == report.stored)
    }

    @Test func aHeartRateLogPacketWithAWrongChecksumIsAnError() async throws {
        let rig = try QRingRig(days: 7)
        defer { Task { await rig.cleanUp() } }
        try await rig.watch.connect()
        await rig.ring.inject(.wrongChecksum(command: QRingCommand.heartRateLog))
        let error = await #expect(throws: QRingError.self) { try await rig.watch.heartRateLog(day: RingDate(year: 2025, month: 11, day: 1)) }
        #expect(error?.code == .checksumMismatch)
    }

    @Test func aLinkLostWhileTheSleepReplyStreamsIsResumedWithoutDuplicates() async throws {
        // A clean sync first, to count its packets (both directions, both pairs).
        let clean = try QRingRig(days: 7, chunkSize: 20)
        _ = try await clean.sync().run(from: QRingRig.from)
        let statistics = await clean.ring.statistics
        await clean.cleanUp()
        let packets = statistics.packetsReceived + statistics.notificationsSent + statistics.sleepRequests
        // The sleep reply comes last: the link goes five notifications before its end.
        let rig = try QRingRig(days: 7, faults: FaultInjection(disconnectEvery: packets - 5), chunkSize: 20)
        defer { Task { await rig.cleanUp() } }
        let report = try await rig.sync().run(from: QRingRig.from)
        #expect(report.reconnects == 1)
        #expect(await rig.watch.drops.incompleteFrames == 1, "the cut frame is dropped and counted")
        #expect(try await rig.stored() == rig.groundTruth, "every record once")
    }

    @Test func theOpenerSimulatesARing() async throws {
        var options = SimulatedWatchOptions()
        options.now = QRingRig.now
        options.timeZone = QRingRig.zone
        options.historyDays = 3
        let opened = try WatchFamilies.openSimulated(options, dialect: .qring, configuration: QRingRig.configuration)
        let ring = try #require((opened.device as? SimulatedQRingDevice)?.ring)
        #expect(opened.central is QRingWatch)
        #expect(opened.device.recordCount == ring.history.nights.flatMap(\.items).count)
        let info = try await opened.central.connect()
        #expect(info.dialect == .qring)
        #expect(await opened.central.capabilities.alarms == nil)
        await opened.central.disconnect()
        let dialect = try WatchFamilies.dialect(named: .qring)
        #expect(dialect.gatt == .qring)
        #expect(dialect.gatt?.secondChannel?.service == QRingGATT.bigDataService)
        #expect(GATTProfile.npk.secondChannel == nil, "NPK keeps one pair")
    }
}

/// The QRing central against a ring whose answers on the first pair come late, after the write
/// returned: a ring's request is never sent again, and its wait used to be one request timeout
/// (the cause issue 47 found in the Huami central, in the same form here).
@Suite struct QRingLateAnswerTests {
    /// The simulated ring with every notification of its first pair delivered `delay` after the
    /// ring sent it and at least `gap` after the one before, in order: the write returns first.
    actor LateAnswers: PeripheralEndpoint {
        let ring: SimulatedRing
        let delay: Duration
        let gap: Duration
        private var last: Task<Void, Never>?
        private var lastDue = ContinuousClock.now

        init(_ ring: SimulatedRing, delay: Duration, gap: Duration = .zero) {
            self.ring = ring
            self.delay = delay
            self.gap = gap
        }

        func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {
            await ring.centralConnected(mtu: mtu) { [weak self] bytes in await self?.later(bytes, send) }
        }

        private func later(_ bytes: [UInt8], _ send: @escaping @Sendable ([UInt8]) async -> Void) {
            let earlier = last, due = max(ContinuousClock.now + delay, lastDue + gap)
            lastDue = due
            last = Task {
                await earlier?.value
                try? await Task.sleep(until: due)
                await send(bytes)
            }
        }

        func centralWrote(_ chunk: [UInt8]) async { await ring.centralWrote(chunk) }

        func centralDisconnected() async {
            last?.cancel()
            await ring.centralDisconnected()
        }
    }

    @Test("connect, battery and a week's sync through a ring that answers later than a request timeout after the write")
    func answersLaterThanARequestTimeoutAfterTheWrite() async throws {
        let ring = SimulatedRing(configuration: SimulatedRing.Configuration(), history: RingHistory(seed: 42, timeZone: QRingRig.zone, now: QRingRig.now, days: 7))
        var configuration = QRingRig.configuration
        // A wait of 10 × 500 ms for the first packet, which comes 1 s after the write: twice a
        // request timeout late, with 4 s to spare for a starved machine (400 ms, then 1 s left too
        // little: the flake ledger's entries for this suite).
        configuration.requestTimeout = .milliseconds(500)
        configuration.requestRetries = 9
        let late = LateAnswers(ring, delay: .milliseconds(1000))
        let watch = QRingWatch(transport: LoopbackTransport(peripheral: late, mtu: try ATTMTU(247), standard: ring, name: ring.configuration.name,
                                                          secondChannel: ring),
                               configuration: configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-qring-late-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        let info = try await watch.connect()
        #expect(info.model == "R02_5A1C")
        #expect(try await watch.battery() == BatteryStatus(level: 64, state: .discharging))
        var sync = SleepSync(watch: watch, store: store, watchId: QRingRig.watchId)
        sync.firstBackoff = .milliseconds(20)
        let report = try await sync.run(from: QRingRig.from)
        let truth = ring.history.nights.flatMap(\.items).filter { $0.start >= QRingRig.from }.sorted { $0.start < $1.start }
        #expect(try await store.sleepRecords(watch: QRingRig.watchId) == truth)
        #expect(report.heartRateError == nil, "\(report.heartRateError.map { "\($0)" } ?? "")")
        #expect(report.heartRateFetched > 7 * 280, "a reading every five minutes for a week")
        #expect(report.heartRateStored == report.heartRateFetched)
        await watch.disconnect()
    }

    @Test("a day's heart-rate log whose 24 packets take longer together than the wait for the first arrives whole")
    func aLongAnswerIsWaitedForPacketByPacket() async throws {
        let ring = SimulatedRing(configuration: SimulatedRing.Configuration(), history: RingHistory(seed: 42, timeZone: QRingRig.zone, now: QRingRig.now, days: 7))
        let day = RingDate(year: 2025, month: 11, day: 1)
        let prompt = try QRingRig.central(for: ring)
        _ = try await prompt.connect()
        let expected = try await prompt.heartRateLog(day: day)
        await prompt.disconnect()
        guard case let .samples(samples, _) = expected else { Issue.record("the ring has no log for \(day)"); return }
        #expect(samples.count > 200, "a whole day of five-minute readings")

        var configuration = QRingRig.configuration
        // 4 s for the first packet (4 attempts' time), which a starved test process still meets
        // (250 ms, 1 s in all, failed once in a full parallel run on 2 cores); the 24 packets
        // 300 ms apart take 7.2 s together, longer than that wait, each well within the page's.
        configuration.requestTimeout = .seconds(1)
        configuration.pageIdleTimeout = .seconds(2)
        let paced = LateAnswers(ring, delay: .zero, gap: .milliseconds(300))
        let watch = QRingWatch(transport: LoopbackTransport(peripheral: paced, mtu: try ATTMTU(247), standard: ring, name: ring.configuration.name,
                                                           secondChannel: ring),
                               configuration: configuration)
        _ = try await watch.connect()
        #expect(try await watch.heartRateLog(day: day) == expected)
        await watch.disconnect()
    }
}
