import Foundation
import TSDevice
import TSModels
import TSNpk
import TSNpkSimulator
import TSNpkWatch
import TSSimulatedHistory
import TSSleep
import TSStore
import TSTransport
import TSWatchService
import Testing

/// The NPK watch's own heart-rate history (sync type 1) through `SleepSync`, against the
/// simulated watch's readings.
@Suite struct NpkHeartRateTests {
    static let watchId = WatchID("AA:BB:CC:DD:EE:0F")!

    /// A simulated watch with a week of nights and the heart rate of the 8 days before `now`,
    /// with `extra` readings beside it; its central; a store.
    struct Rig {
        let simulator: SimulatedNpkWatch
        let watch: NpkWatch
        let store: GatewayStore
        let directory: URL
        let records: [SleepItem]
        let from: Int64

        init(extra: [HeartRateSample] = [], abilities: [NpkAbility] = [.heartRate, .spo2]) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-npkhr-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            records = SleepDataGenerator(seed: 42, timeZone: NpkRig.zone).records(days: 7, lastMorning: NpkRig.now, notAfter: NpkRig.now)
            from = records[0].start
            let now = Int64(NpkRig.now.timeIntervalSince1970)
            let heartRate = HeartRateHistoryGenerator(seed: 3).samples(start: now - 8 * 86_400, end: now, records: records) + extra
            var configuration = SimulatedNpkWatch.Configuration()
            configuration.timeZone = NpkRig.zone
            configuration.abilities = abilities
            simulator = SimulatedNpkWatch(configuration: configuration, records: records, heartRate: heartRate)
            watch = try NpkRig.central(for: simulator)
            store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        }

        /// What a sync from `from` to now must store: the simulator's readings in that range that
        /// a heart-rate sample can hold.
        func truth() async -> [HeartRateSample] {
            let range = from..<Int64(NpkRig.now.timeIntervalSince1970) + 1
            return await simulator.heartRate.filter { range.contains(Int64($0.time.timeIntervalSince1970)) && (1...255).contains($0.bpm) }
        }

        func sync() -> SleepSync {
            var sync = SleepSync(watch: watch, store: store, watchId: NpkHeartRateTests.watchId)
            sync.firstBackoff = .milliseconds(20)
            return sync
        }

        func cleanUp() async {
            await watch.disconnect()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func aSleepSyncStoresTheHeartRateTheWatchMeasuredAndTheNightsCarryIt() async throws {
        let rig = try Rig()
        defer { Task { await rig.cleanUp() } }
        let truth = await rig.truth()
        #expect(truth.count > 6 * 270, "six days and more of readings every 5 minutes, less the gaps")
        #expect(await rig.simulator.heartRate.first.map { Int64($0.time.timeIntervalSince1970) < rig.from } == true,
                "the watch holds readings before the range too")

        let report = try await rig.sync().run(from: rig.from)
        #expect(await rig.watch.capabilities.heartRateHistory)
        #expect(report.heartRateFetched == truth.count)
        #expect(report.heartRateStored == truth.count)
        #expect(try await rig.store.heartRate(watch: Self.watchId) == truth, "every reading at the time the watch measured it, nothing outside the range")
        #expect(try await rig.store.sleepRecords(watch: Self.watchId) == rig.records)
        #expect(await rig.simulator.statistics.heartRateSyncs == 1)
        #expect(await rig.watch.rejectedHeartRateReadings == 0)
        #expect(await rig.watch.rejectedHeartRateDays == 0)

        // The nights' reports carry the heart rate of the readings inside each night.
        let daily = try await rig.store.dailySleepReport(watch: Self.watchId, first: LocalDate(year: 2025, month: 10, day: 28),
                                                         last: LocalDate(year: 2025, month: 11, day: 3), timeZone: NpkRig.zone, rule: .withNap)
        let nights = daily.days.flatMap(\.nightSleeps)
        #expect(nights.count >= 6)
        for night in nights {
            let inside = truth.filter { (night.summary.start..<night.summary.end).contains(Int64($0.time.timeIntervalSince1970)) }
            #expect(night.heartRate == HeartRateSummary(inside), "the night from \(night.summary.start)")
            #expect(night.heartRate != nil)
        }

        // Resuming the stored range asks only for the last day and a half again.
        let again = try await rig.sync().run(from: rig.from)
        #expect(again.heartRateFetched > 0 && again.heartRateFetched < truth.count)
        #expect(again.heartRateStored == 0, "stored already")
        #expect(try await rig.store.heartRate(watch: Self.watchId) == truth)
    }

    @Test func aReadingOutOfRangeIsCountedAndNotStored() async throws {
        // Manual measurements of 0 and 300 bpm inside the range, between the 5-minute marks.
        let time = Int64(NpkRig.now.timeIntervalSince1970) - 2 * 86_400 + 1_001
        let bad = [HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(time)), bpm: 300),
                   HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(time + 1)), bpm: 0)]
        let rig = try Rig(extra: bad)
        defer { Task { await rig.cleanUp() } }
        let truth = await rig.truth()
        let report = try await rig.sync().run(from: rig.from)
        #expect(await rig.watch.rejectedHeartRateReadings == 2)
        #expect(report.heartRateStored == truth.count)
        #expect(try await rig.store.heartRate(watch: Self.watchId) == truth)
        #expect(try await rig.store.heartRate(watch: Self.watchId).allSatisfy { (1...255).contains($0.bpm) })
    }

    @Test func aDayThatDoesNotParseIsCountedAndTheOtherDaysStored() async throws {
        let rig = try Rig()
        defer { Task { await rig.cleanUp() } }
        let days = try await rig.simulator.heartRateDays(in: rig.from..<Int64(NpkRig.now.timeIntervalSince1970) + 1)
        let lost = NpkTime.unix(fromT2000: days[2].startTimestamp)...NpkTime.unix(fromT2000: days[2].endTimestamp)
        let truth = await rig.truth().filter { !lost.contains(Int64($0.time.timeIntervalSince1970)) }
        await rig.simulator.injectHeartRateFault(.unparsableDay(2))
        let report = try await rig.sync().run(from: rig.from)
        #expect(await rig.watch.rejectedHeartRateDays == 1)
        #expect(report.reconnects == 0, "asking again would bring the same bytes")
        #expect(try await rig.store.heartRate(watch: Self.watchId) == truth)
        #expect(try await rig.store.sleepRecords(watch: Self.watchId) == rig.records, "the sleep sync went on")
    }

    @Test func aDamagedDayIsDroppedByTheReassemblerAndTheHeartRateAskedForAgain() async throws {
        let rig = try Rig()
        defer { Task { await rig.cleanUp() } }
        await rig.simulator.injectHeartRateFault(.corruptDay(3))
        let report = try await rig.sync().run(from: rig.from)
        #expect(await rig.watch.streamDrops.crcMismatch == 1)
        #expect(report.reconnects == 1)
        #expect(await rig.simulator.statistics.heartRateSyncs == 2)
        #expect(try await rig.store.heartRate(watch: Self.watchId) == (await rig.truth()))
    }

    @Test func aWatchWithoutHeartRateIsNotAskedForIt() async throws {
        let rig = try Rig(abilities: [.spo2])
        defer { Task { await rig.cleanUp() } }
        let report = try await rig.sync().run(from: rig.from)
        #expect(await rig.watch.capabilities.heartRateHistory == false)
        #expect(report.heartRateFetched == 0)
        #expect(await rig.simulator.statistics.heartRateSyncs == 0)
        #expect(try await rig.store.sleepRecords(watch: Self.watchId) == rig.records)
    }
}

extension NpkHeartRateTests {
    @Test func aLinkLostAgainAndAgainDuringTheHeartRateIsResumedBehindTheLastSample() async throws {
        // The loopback drops every link after 14 packets: a login, device information and the
        // clock take 6 of them, so each link carries a few days of heart rate at most.
        let rig = try Rig()
        defer { Task { await rig.cleanUp() } }
        let truth = await rig.truth()
        try await rig.watch.connect()
        await rig.watch.disconnect()
        let flaky = try NpkRig.central(for: rig.simulator, faults: FaultInjection(disconnectEvery: 14))
        var sync = SleepSync(watch: flaky, store: rig.store, watchId: Self.watchId)
        sync.firstBackoff = .milliseconds(20)
        sync.maxReconnects = 200
        sync.maxBackoff = .milliseconds(50)
        let report = try await sync.run(from: rig.from)
        await flaky.disconnect()
        #expect(report.reconnects > 2)
        #expect(try await rig.store.heartRate(watch: Self.watchId) == truth)
        #expect(report.heartRateStored == truth.count, "every sample once")
        #expect(try await rig.store.sleepRecords(watch: Self.watchId) == rig.records)
    }
}
