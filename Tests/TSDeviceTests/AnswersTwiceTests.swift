import Foundation
import TSDevice
import TSModels
import TSSimulator
import Testing

/// A protocol v1 watch that sends every response twice (issue 47: answers that come twice, or
/// for an earlier request): the central pairs a response with its request by sequence number, so
/// the copy finds no request of its sequence and is dropped; the journey ends as with once.
@Suite("the v1 central and a watch that answers twice")
struct AnswersTwiceTests {
    struct Seen: Equatable {
        var model: String
        var alarmsAfterSet: [Alarm]
        var battery: BatteryStatus
        var monitor: MonitorConfig
        var records: [SleepItem]
    }

    static func journey(answersTwice: Bool) async throws -> (Seen, repeated: Int) {
        let rig = try Rig(days: 7, fast: false, answersTwice: answersTwice)
        let info = try await rig.watch.connect()
        try await rig.watch.setAlarms([Alarm(slot: 0, label: "Twice", hour: 6, minute: 10, repeatDays: .workdays)])
        let alarms = try await rig.watch.alarms()
        _ = try await rig.watch.battery()
        let battery = try await rig.watch.battery()
        let monitor = try await rig.watch.monitorConfig(.heartRate)
        let records = try await rig.watch.sleepRecords(start: rig.start, end: nil)
        await rig.watch.disconnect()
        return (Seen(model: info.model, alarmsAfterSet: alarms, battery: battery, monitor: monitor, records: records),
                await rig.simulator.statistics.responsesRepeated)
    }

    @Test("connect, alarms set and read, battery twice, a monitor and a week's sleep end as with a watch that answers once")
    func everyResponseTwice() async throws {
        let (once, _) = try await Self.journey(answersTwice: false)
        let (twice, repeated) = try await Self.journey(answersTwice: true)
        #expect(!once.records.isEmpty)
        #expect(twice == once, "twice: \(twice)\nonce: \(once)")
        #expect(repeated >= 8, "the copies went out: \(repeated) responses sent twice")
    }
}
