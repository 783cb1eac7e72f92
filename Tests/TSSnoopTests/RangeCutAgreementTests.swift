import Foundation
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSTransport

/// A sync's range (`sleep sync --since 2d`) starts at another minute each time it runs, so it cuts
/// the watch's history (and a Huami band's transfers, which start 12 hours before it) somewhere
/// else each hour. Whatever the cut, the sleep items `protocol decode` reads from the recorded
/// exchange are the ones the central synced: each dialect's simulated watch is synced with the
/// range starting at every minute of a day, and its recording decoded.
@Suite(.serialized) struct RangeCutAgreementTests {
    typealias D = DialectCaptureTests
    static let dialects: [Dialect] = [.protocolV1, .npk, .qring, Dialect(rawValue: "huami")]
    /// The first cut: two days before the simulated watch's clock.
    static let firstStart = Int64(D.now.timeIntervalSince1970) - 2 * 86_400
    static let minutesOfADay = 1440
    /// Syncs run at once (each over its own simulated watch).
    static let concurrentSyncs = 4

    struct Cut: Sendable {
        var start: Int64
        var synced: Set<SleepItem>
        var decoded: Set<SleepItem>
        var unreadFrames: [String]
    }

    /// The sync's start at the cut of minute `minute`: that minute of the day, with as many
    /// seconds as the minute's number modulo 60, so a start between two minutes is cut as well.
    static func start(atMinute minute: Int) -> Int64 { firstStart + Int64(minute * 60 + minute % 60) }

    /// The dialect's simulated watch, synced from `start` over the capturing transport; the items it
    /// gave, and the items the dialect's capture decoder reads in the recording from `start` on.
    static func cut(_ name: Dialect, start: Int64) async throws -> Cut {
        let family = try WatchFamilies.named(name)
        let link = try #require(family.simulated).open(D.threeDays())
        let recording = RecordingTransport(recording: link.transport)
        var configuration = D.configuration()
        configuration.pairingSecret = family.dialect.credential?.neededOnEveryConnect == true ? link.pairingSecret : nil
        let central = family.dialect.makeCentral(recording, configuration)
        try await central.connect()
        let synced = try await central.allSleepRecords(start: start, end: nil)
        await central.disconnect()
        let (_, decoder) = try #require(family.dialect.capturable)
        let frames = CapturedConnections.frames(of: await recording.entries(), decoder: decoder, started: D.now)
        let items = CapturedConnections.sleepItems(in: frames)
        return Cut(start: start, synced: Set(synced), decoded: Set(items.filter { syncedFrom(start, $0, dialect: name) }),
                   unreadFrames: frames.filter { $0.verdict != .frame }.map(\.text))
    }

    /// Which items a sync from `start` keeps: a Huami band's item under way at `start` whole
    /// (`HuamiWatch.sleepTransfer`, read from samples fetched before it), the others' from `start` on.
    static func syncedFrom(_ start: Int64, _ item: SleepItem, dialect: Dialect) -> Bool {
        dialect == Dialect(rawValue: "huami") ? item.end > start : item.start >= start
    }

    static func describe(_ cut: Cut) -> String {
        let missing = cut.synced.subtracting(cut.decoded).sorted { $0.start < $1.start }
        let extra = cut.decoded.subtracting(cut.synced).sorted { $0.start < $1.start }
        func items(_ list: [SleepItem]) -> String { list.prefix(4).map { "\($0.stage) \($0.start)+\($0.duration)" }.joined(separator: ", ") }
        return "from \(cut.start) (minute \((cut.start - firstStart) / 60)): synced \(cut.synced.count), decoded \(cut.decoded.count); "
            + "missing \(missing.count) [\(items(missing))]; extra \(extra.count) [\(items(extra))]"
            + (cut.unreadFrames.isEmpty ? "" : "; \(cut.unreadFrames.count) frame(s) not read: \(cut.unreadFrames.prefix(2))")
    }

    @Test(arguments: RangeCutAgreementTests.dialects)
    func theDecodedItemsAreTheSyncedOnesWhereverTheRangeStarts(dialect: Dialect) async throws {
        var differing: [Cut] = []
        var syncedAny = false
        try await withThrowingTaskGroup(of: Cut.self) { group in
            var next = 0
            func addNext() {
                guard next < Self.minutesOfADay else { return }
                let start = Self.start(atMinute: next)
                next += 1
                group.addTask { try await Self.cut(dialect, start: start) }
            }
            for _ in 0..<Self.concurrentSyncs { addNext() }
            while let cut = try await group.next() {
                syncedAny = syncedAny || !cut.synced.isEmpty
                if cut.synced != cut.decoded || !cut.unreadFrames.isEmpty { differing.append(cut) }
                addNext()
            }
        }
        #expect(syncedAny, "no cut synced any sleep item: the simulated history does not reach the range")
        differing.sort { $0.start < $1.start }
        let differingCuts = differing.count
        #expect(differingCuts == 0, "\(differingCuts) of \(Self.minutesOfADay) cuts differ; first: \(differing.prefix(3).map(Self.describe).joined(separator: " | "))")
    }
}
