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
}
