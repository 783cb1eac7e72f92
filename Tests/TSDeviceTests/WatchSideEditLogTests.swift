import Foundation
import Testing
import TSDevice
import TSModels
import TSSimulator

/// The simulated watch's log of edits made on it: the ground truth `scripts/soak` checks the
/// daemon's alarm history against (`ground-truth:` in the daemon's configuration).
@Suite struct WatchSideEditLogTests {
    @Test func anEditIsAcknowledgedOnlyWhenTheCentralAnsweredItsAnnouncement() async throws {
        let rig = try Rig(alarms: [Alarm(slot: 0, label: "Work", hour: 6, minute: 45)])
        await rig.simulator.nudgeFirstAlarmOnWatch()          // nobody connected: announced to no one
        try await rig.watch.connect()
        let changes = await rig.watch.alarmChanges()
        await rig.simulator.nudgeFirstAlarmOnWatch()
        var iterator = changes.makeAsyncIterator()
        let received = await iterator.next()
        let deadline = ContinuousClock.now + .seconds(5)
        while await rig.simulator.watchSideEdits.last?.acknowledged != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let edits = await rig.simulator.watchSideEdits
        #expect(edits.map(\.acknowledged) == [false, true])
        #expect(edits.map { $0.alarms.first?.minute } == [50, 55])
        #expect(edits.map(\.origin) == [.watch, .watch])
        #expect(received?.alarms == edits.last?.alarms)
    }

    @Test func anEditWhoseAnnouncementIsNeverAnsweredStaysUnacknowledged() async throws {
        let rig = try Rig(alarms: [Alarm(slot: 0, label: "Work", hour: 6, minute: 45)])
        try await rig.watch.connect()
        await rig.watch.disconnect()
        await rig.simulator.nudgeFirstAlarmOnWatch()
        try await Task.sleep(for: .milliseconds(200))
        #expect(await rig.simulator.watchSideEdits.map(\.acknowledged) == [false])
    }

    @Test func withAJournalTheWatchHoldsOnlyItsNewestEditsAndLosesNone() async throws {
        let rig = try Rig(alarms: [Alarm(slot: 0, label: "Work", hour: 6, minute: 0)])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-edits-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        await rig.simulator.keepWatchSideEdits(in: try WatchSideEditJournal(path: path))
        for _ in 0..<50 { await rig.simulator.nudgeFirstAlarmOnWatch() }
        #expect(await rig.simulator.watchSideEdits.count == 32)
        struct Written: Decodable { var alarms: [Alarm]; var acknowledged: Bool }
        let all = try await rig.simulator.allWatchSideEdits().map { try JSONDecoder().decode(Written.self, from: $0) }
        #expect(all.count == 50)
        // Each edit moves the first alarm on by 5 minutes: the 50 edits in order, none twice.
        #expect(all.map { $0.alarms.first.map { Int($0.minute) } } == (1...50).map { ($0 * 5) % 60 })
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }
}
