import Foundation
import Synchronization
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulator
import TSStore
import TSTransport
import Testing

private let simulatedWatch = WatchID("00:00:5E:00:53:01")!

private func temporaryDatabase() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-test-\(UUID()).sqlite").path
}

private struct SimulatedCrash: Error {}

@Suite struct SleepSyncTests {
    /// 10 % of packets dropped and 10 % corrupted, and the link cut every N packets (ATT
    /// writes and notifications): at MTU 23 a 30-day sync takes ~500 packets, at 247 only ~30.
    @Test(arguments: [(23, 200), (247, 12)])
    func thirtyDaysOverAHostileLinkEndEqualToTheGroundTruth(mtu: Int, disconnectEvery: Int) async throws {
        let faults = FaultInjection(dropRate: 0.1, corruptRate: 0.1, disconnectEvery: disconnectEvery, seed: 30)
        let rig = try Rig(days: 30, faults: faults, mtu: mtu)
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try GatewayStore(path: path)
        var sync = SleepSync(watch: rig.watch, store: store, watchId: simulatedWatch)
        sync.maxReconnects = 200
        sync.firstBackoff = .milliseconds(1)
        let report = try await sync.run(from: Int64(rig.start))
        let stored = try await store.sleepRecords(watch: simulatedWatch)
        #expect(stored == rig.groundTruth, "none lost, none duplicated")
        #expect(stored.count > 600)
        #expect(report.reconnects > 0, "the link really dropped")
        #expect(report.fetched >= stored.count)
        #expect(report.stored == stored.count)
    }

    @Test func aSecondSyncFetchesOnlyWhatIsNew() async throws {
        let rig = try Rig(days: 10)
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try GatewayStore(path: path)
        let sync = SleepSync(watch: rig.watch, store: store, watchId: simulatedWatch)
        let first = try await sync.run(from: Int64(rig.start))
        #expect(first.stored == rig.groundTruth.count)
        let next = rig.groundTruth.last!.end + 3600
        let newRecord = SleepItem(stage: .light, start: next, duration: 600)
        await rig.simulator.replaceRecords(rig.groundTruth + [newRecord])
        let second = try await sync.run(from: Int64(rig.start))
        #expect(second.stored == 1)
        #expect(second.fetched <= 2, "resumed from the cursor instead of fetching everything again")
        #expect(try await store.sleepRecords(watch: simulatedWatch) == rig.groundTruth + [newRecord])
    }

    @Test func aDestructiveWatchLosesNothingWhenTheGatewayDiesBetweenReceiveAndCommit() async throws {
        var caps = DeviceInfoCapabilities.simulatorDefault
        caps.deletesSyncedRecords = true
        let rig = try Rig(days: 20, capabilities: caps, mtu: 185)
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }

        // First run: the gateway "dies" after receiving page 3, before storing it.
        var dying = SleepSync(watch: rig.watch, store: try GatewayStore(path: path), watchId: simulatedWatch)
        let pagesSeen = Mutex(0)
        dying.willStore = { _ in if pagesSeen.withLock({ seen in defer { seen += 1 }; return seen }) == 3 { throw SimulatedCrash() } }
        await #expect(throws: SimulatedCrash.self) { _ = try await dying.run(from: Int64(rig.start)) }
        #expect(await rig.simulator.state.records.count == rig.groundTruth.count, "nothing deleted before a commit")
        await rig.watch.disconnect()

        // A new process: new store handle on the same file, new device actor.
        let store = try GatewayStore(path: path)
        let partial = try await store.sleepRecords(watch: simulatedWatch)
        #expect(!partial.isEmpty && partial.count < rig.groundTruth.count)
        let watch = Watch(transport: LoopbackTransport(peripheral: rig.simulator, mtu: try ATTMTU(185)), configuration: await rig.watch.configuration)
        let report = try await SleepSync(watch: watch, store: store, watchId: simulatedWatch).run(from: Int64(rig.start))
        #expect(try await store.sleepRecords(watch: simulatedWatch) == rig.groundTruth)
        #expect(report.deletedOnWatch == rig.groundTruth.count)
        #expect(await rig.simulator.state.records.isEmpty)

        // Later nights: only the new records are fetched and committed.
        let later = SleepItem(stage: .deep, start: rig.groundTruth.last!.end + 7200, duration: 1200)
        await rig.simulator.replaceRecords([later])
        let again = try await SleepSync(watch: watch, store: store, watchId: simulatedWatch).run(from: Int64(rig.start))
        #expect(again.deletedOnWatch == 1)
        #expect(try await store.sleepRecords(watch: simulatedWatch) == rig.groundTruth + [later])
    }
}
