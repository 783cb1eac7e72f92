import Foundation
import Synchronization
import Testing
import TSDevice
import TSModels
import TSStore

private let daysWatch = WatchID("00:00:5E:00:53:D0")!
private let plainWatch = WatchID("00:00:5E:00:53:0C")!
private let refusingWatch = WatchID("00:00:5E:00:53:0F")!

/// `SleepSync` over a dialect that takes no acknowledgement and answers a range with a list of
/// days (as TopStep's NPK does): everything is stored, nothing is acknowledged, and the cursor
/// moves only with what the store committed.
@Suite struct DialectSleepSyncTests {
    static let day: Int64 = 86_400
    static let start: Int64 = 1_762_000_000

    /// Three days of records, each day a few light and deep items.
    static let records: [SleepItem] = (0..<3).flatMap { day in
        (0..<4).map { index in
            SleepItem(stage: index.isMultiple(of: 2) ? .light : .deep, start: start + Int64(day) * Self.day + Int64(index) * 1800, duration: 1800)
        }
    }

    @Test func aWatchThatTakesNoAcknowledgementIsSyncedByTheCursorAlone() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-daylist-\(UUID().uuidString.prefix(8)).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let watch = DayListWatch(records: Self.records)
        let store = try GatewayStore(path: path)

        // The gateway "dies" before storing the second day: the first stays, nothing is acknowledged.
        var dying = SleepSync(watch: watch, store: store, watchId: daysWatch)
        let parts = Mutex(0)
        dying.willStore = { _ in if parts.withLock({ seen in defer { seen += 1 }; return seen }) == 1 { throw CancellationError() } }
        await #expect(throws: CancellationError.self) { _ = try await dying.run(from: Self.start) }
        #expect(try await store.sleepRecords(watch: daysWatch, start: 0, end: .max) == Array(Self.records.prefix(4)))
        let cursor = try #require(try await store.syncCursor(watch: daysWatch))
        #expect(cursor.upTo == Self.records[3].start, "the cursor reaches the last stored record, no further")

        let report = try await SleepSync(watch: watch, store: store, watchId: daysWatch).run(from: Self.start)
        #expect(report.stored == 8)
        #expect(report.committed == nil)
        #expect(report.deletedOnWatch == 0)
        #expect(try await store.sleepRecords(watch: daysWatch, start: 0, end: .max) == Self.records)
        #expect(await watch.acknowledgements == 0, "a watch without acknowledgements is never sent one")
        #expect(await watch.requestedStarts == [Self.start, Self.records[3].start], "the second sync resumes at the cursor")
    }

    @Test func aWatchWithAHeartRateHistoryHandsItOverWithTheSleepRecords() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-daylist-\(UUID().uuidString.prefix(8)).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Every 5 minutes over the three days, and one sample before the range that is not asked for.
        let samples = (-1..<(3 * 288)).map { slot in
            HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(Self.start + Int64(slot) * 300)), bpm: 50 + (slot & 31))
        }
        let watch = DayListWatch(records: Self.records, heartRate: samples)
        let store = try GatewayStore(path: path)

        let first = try await SleepSync(watch: watch, store: store, watchId: daysWatch).run(from: Self.start)
        #expect(first.heartRateFetched == 3 * 288)
        #expect(first.heartRateStored == 3 * 288)
        #expect(try await store.heartRate(watch: daysWatch) == Array(samples.dropFirst()), "stored at the times the watch measured them")

        // Resuming the stored range, the history is asked for from a day and a half before the last record.
        let upTo = try #require(try await store.syncCursor(watch: daysWatch)).upTo
        let again = try await SleepSync(watch: watch, store: store, watchId: daysWatch).run(from: Self.start)
        let resumed = upTo - SleepSync.heartRateOverlap
        #expect(await watch.heartRateRequests.last?.lowerBound == resumed)
        #expect(again.heartRateFetched == samples.filter { Int64($0.time.timeIntervalSince1970) >= resumed }.count)
        #expect(again.heartRateFetched > 0)
        #expect(again.heartRateStored == 0, "a sample stored already is not stored twice")
        #expect(await watch.heartRateRequests.count == 2)

        // A watch that refuses its history still hands over the records.
        let refusing = DayListWatch(records: Self.records, heartRate: samples)
        await refusing.refuseHeartRate(.protocolViolation("sync start answered 127"))
        let refused = try await SleepSync(watch: refusing, store: store, watchId: refusingWatch).run(from: Self.start)
        #expect(refused.stored == Self.records.count && refused.heartRateFetched == 0)
        #expect(refused.heartRateError?.contains("127") == true)
        #expect(refused.reconnects == 0, "a refusal is not retried")

        let withoutHistory = DayListWatch(records: Self.records)
        let report = try await SleepSync(watch: withoutHistory, store: store, watchId: plainWatch).run(from: Self.start)
        #expect(report.heartRateFetched == 0)
        #expect(await withoutHistory.heartRateRequests.isEmpty, "a watch without the capability is not asked")
    }
}

/// A central answering a range with the records of each day in one part, with no total and no
/// acknowledgement.
actor DayListWatch: WatchCentral {
    nonisolated let dialect = Dialect(rawValue: "day-list")
    nonisolated let configuration = WatchConfiguration()
    private let records: [SleepItem]
    private(set) var info: DeviceInfo?
    private(set) var acknowledgements = 0
    private(set) var requestedStarts: [Int64] = []
    private let heartRate: [HeartRateSample]?
    /// The watch answers a heart-rate request with this (a refusal), not with samples.
    var heartRateRefusal: WatchError?
    private(set) var heartRateRequests: [Range<Int64>] = []
    private let fanOut = EventFanOut<WatchEvent>(buffer: 4)

    init(records: [SleepItem], heartRate: [HeartRateSample]? = nil) {
        self.records = records
        self.heartRate = heartRate
    }

    var isConnected: Bool { info != nil }
    var capabilities: WatchCapabilities {
        WatchCapabilities(sleepSync: .init(selection: .range, paged: true, deletesSynced: false, acknowledges: false),
                          heartRateHistory: heartRate != nil)
    }

    nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }

    func connect() async throws -> DeviceInfo {
        let described = DeviceInfo(model: "Day list", firmware: "1", capabilities: .nothing, dialect: dialect)
        info = described
        return described
    }

    func disconnect() async { info = nil }

    func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        requestedStarts.append(start)
        let wanted = records.filter { $0.start >= start && $0.start < (end ?? .max) }
        let days = Dictionary(grouping: wanted) { ($0.start - DialectSleepSyncTests.start) / DialectSleepSyncTests.day }
        let parts = AsyncThrowingStream<[SleepItem], any Error> { continuation in
            for day in days.keys.sorted() { continuation.yield(days[day]!) }
            continuation.finish()
        }
        return SleepRecordTransfer(total: nil, parts: parts)
    }

    func refuseHeartRate(_ error: WatchError) { heartRateRefusal = error }

    func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int {
        acknowledgements += 1
        return 0
    }

    func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        heartRateRequests.append(start..<(end ?? .max))
        if let heartRateRefusal { throw heartRateRefusal }
        let wanted = (heartRate ?? []).filter { Int64($0.time.timeIntervalSince1970) >= start && Int64($0.time.timeIntervalSince1970) < (end ?? .max) }
        let days = Dictionary(grouping: wanted) { (Int64($0.time.timeIntervalSince1970) - DialectSleepSyncTests.start) / DialectSleepSyncTests.day }
        return AsyncThrowingStream { continuation in
            for day in days.keys.sorted() { continuation.yield(days[day]!) }
            continuation.finish()
        }
    }
}
