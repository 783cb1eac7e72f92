import Foundation
import TSDevice
import TSGATT
import TSModels
import TSNpkWatch
import TSTransport
import Testing

/// A watch that answers every request twice (issue 47: answers that come twice, or for an earlier
/// request): NPK matches an answer to its request by command and key, so the copy of one answer
/// may arrive while the central waits for the next request of the same command. The central must
/// take each answer once and end as it does with a watch that answers once.
@Suite("the NPK central and a watch that answers twice")
struct NpkAnswersTwiceTests {
    struct Seen: Equatable {
        var model: String
        var alarmsBefore: [Alarm]
        var alarmsAfter: [Alarm]
        var battery: BatteryStatus
        var monitor: MonitorConfig
        var stored: [SleepItem]
        var reconnects: Int
    }

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String] = []
        func add(_ line: String) { lock.withLock { kept.append(line) } }
        var all: [String] { lock.withLock { kept } }
    }

    /// The journey, and what the central said of each frame that came (`-v`'s lines).
    static func journey(answersTwice: Bool) async throws -> (Seen, [String]) {
        let rig = try NpkRig(answersTwice: answersTwice)
        defer { Task { await rig.cleanUp() } }
        let lines = Lines()
        var configuration = NpkRig.configuration
        configuration.traffic = { lines.add($0) }
        let watch = NpkWatch(transport: LoopbackTransport(peripheral: rig.simulator, mtu: try ATTMTU(247)), configuration: configuration)
        let info = try await watch.connect()
        let before = try await watch.alarms()
        try await watch.setAlarms([Alarm(slot: 0, label: "Twice", hour: 6, minute: 10, repeatDays: .workdays)])
        let after = try await watch.alarms()
        // The same command asked twice in a row: the copy of the first answer comes while the second waits.
        _ = try await watch.battery()
        let battery = try await watch.battery()
        let monitor = try await watch.monitorConfig(.heartRate)
        let report = try await rig.sync(watch).run(from: Int64(NpkRig.now.timeIntervalSince1970) - 8 * 86_400)
        await watch.disconnect()
        return (Seen(model: info.model, alarmsBefore: before, alarmsAfter: after, battery: battery, monitor: monitor,
                     stored: try await rig.stored(), reconnects: report.reconnects), lines.all)
    }

    @Test("connect, alarms, battery twice, a monitor and a sleep sync end as with a watch that answers once")
    func everyAnswerTwice() async throws {
        let (once, _) = try await Self.journey(answersTwice: false)
        let (twice, lines) = try await Self.journey(answersTwice: true)
        #expect(!once.stored.isEmpty)
        #expect(twice == once, "twice: \(twice)\nonce: \(once)")
        #expect(twice.reconnects == 0)
        // The copies came, and went where no request of theirs waited.
        let copies = lines.filter { $0.contains("answers no request in flight") || $0.contains("kept until it waits again") }
        #expect(copies.count >= 5, "\(lines.suffix(12))")
    }
}
