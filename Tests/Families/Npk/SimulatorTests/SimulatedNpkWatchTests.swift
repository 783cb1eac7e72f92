import Foundation
import Synchronization
import TSGATT
import TSModels
import TSNpk
import TSNpkSimulator
import TSSimulatedHistory
import Testing

/// The simulated NPK watch on its own, as `tsgateway simulate --dialect npk` drives it behind
/// BlueZ: the chunks it sends for a central's frames, its link-loss fault and the MTU it follows.
@Suite struct SimulatedNpkWatchTests {
    /// The watch's side of one link: every chunk it sent, and the frames they make.
    final class Wire: Sendable {
        let chunks = Mutex<[[UInt8]]>([])
        var send: @Sendable ([UInt8]) async -> Void { { [self] chunk in self.chunks.withLock { $0.append(chunk) } } }

        func frames() -> [NpkFrame] {
            var reassembler = NpkReassembler()
            return chunks.withLock { $0 }.flatMap { reassembler.feed($0) }.compactMap { output in
                if case let .frame(frame) = output { frame } else { nil }
            }
        }
    }

    static let zone = TimeZone(identifier: "Europe/Berlin")!
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    let records = SleepDataGenerator(seed: 7, timeZone: zone).records(days: 7, lastMorning: now, notAfter: now)

    func watch() -> SimulatedNpkWatch {
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.timeZone = Self.zone
        return SimulatedNpkWatch(configuration: configuration, records: records)
    }

    /// The central asks for every sleep day of the records.
    func askForSleep(_ watch: SimulatedNpkWatch, sequence: UInt16) async throws {
        let request = try NpkSyncType.sleep.startRequest(fromUnix: records.first!.start, toUnix: records.last!.start + 86_400)
        let bytes = try NpkFrame(command: .syncStart, sequence: sequence, message: request).encoded()
        for chunk in NpkChunking.chunks(bytes, size: 20) { await watch.centralWrote(chunk) }
    }

    @Test func aLinkLostMidSyncStopsTheStreamAfterTheGivenDaysOnce() async throws {
        let watch = watch()
        let losses = Mutex(0)
        await watch.onLinkLoss { losses.withLock { $0 += 1 } }
        await watch.queueSleepFaults([.loseLinkAfterDays(3)])
        let first = Wire()
        await watch.centralConnected(mtu: try ATTMTU(247), send: first.send)
        try await askForSleep(watch, sequence: 1)
        let days = await watch.sleepDays(in: records.first!.start..<(records.last!.start + 86_400)).count
        #expect(days >= 7)
        #expect(first.frames().map(\.command) == [.syncStart, .sleepData, .sleepData, .sleepData], "the answer and 3 days, no end of sync")
        #expect(losses.withLock { $0 } == 1)
        #expect(await watch.statistics.linksLost == 1)
        #expect(await watch.statistics.sleepDaysSent == 3)

        // The central comes back: the fault was for one sync only.
        await watch.centralDisconnected()
        let second = Wire()
        await watch.centralConnected(mtu: try ATTMTU(247), send: second.send)
        try await askForSleep(watch, sequence: 1)
        let commands = second.frames().map(\.command)
        #expect(commands == [.syncStart] + Array(repeating: .sleepData, count: days) + [.syncEnd])
        #expect(losses.withLock { $0 } == 1)
    }

    @Test func faultsQueuedApplyToOneSyncEachInOrder() async throws {
        let watch = watch()
        await watch.queueSleepFaults([.dropDay(0), .corruptDay(1)])
        let wire = Wire()
        await watch.centralConnected(mtu: try ATTMTU(247), send: wire.send)
        try await askForSleep(watch, sequence: 1)
        let indices = wire.frames().filter { $0.command == .sleepData }.compactMap { try? NpkListPosition.split($0.payload).0.index }
        #expect(indices.first == 1, "the first sync lacks day 0")
        #expect(indices == Array(1..<UInt32(indices.count + 1)))
        wire.chunks.withLock { $0 = [] }
        try await askForSleep(watch, sequence: 2)
        var reassembler = NpkReassembler()
        _ = wire.chunks.withLock { $0 }.flatMap { reassembler.feed($0) }
        #expect(reassembler.drops.crcMismatch == 1, "the second sync's day 1 fails its CRC")
    }

    @Test func chunksFollowTheMTUTheLinkReports() async throws {
        let watch = watch()
        let wire = Wire()
        await watch.centralConnected(mtu: .default, send: wire.send)
        await watch.linkMTUChanged(try ATTMTU(100))
        try await askForSleep(watch, sequence: 1)
        let sizes = wire.chunks.withLock { $0.map(\.count) }
        #expect(sizes.max() == 97, "MTU − 3 of the MTU the link reported")
        #expect(wire.frames().last?.command == .syncEnd)
    }

    @Test func anEditOnTheWristMovesTheFirstAlarmAndSaysSo() async throws {
        let watch = watch()
        let wire = Wire()
        await watch.centralConnected(mtu: try ATTMTU(247), send: wire.send)
        await watch.nudgeFirstAlarmOnWrist()
        #expect(await watch.alarms.map { "\($0.hour):\($0.minute)" } == ["6:50"])
        let notice = try #require(wire.frames().first)
        #expect(notice.command == .dataChanged)
        #expect(try notice.payload(as: TSMetaDataChanged.self).type == 1)
    }
}
