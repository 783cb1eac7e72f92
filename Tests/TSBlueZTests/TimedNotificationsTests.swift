import Foundation
import TSSimulatorPeripheral
import TSTransport
import Testing

/// The simulated peripherals' `--answer-timing`: at once from inside the handler, or late and in
/// the order made.
@Suite struct TimedNotificationsTests {
    final class Sent: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Int] = []
        func append(_ value: Int) { lock.withLock { values.append(value) } }
        var all: [Int] { lock.withLock { values } }
    }

    @Test(arguments: [AnswerTiming.immediate, .beforeResponse, .late(.zero)])
    func anAnswerThatIsNotLateGoesOutBeforeSendReturns(_ timing: AnswerTiming) {
        let sent = Sent(), answers = TimedNotifications(timing)
        for value in 0..<3 { answers.send { sent.append(value) } }
        #expect(sent.all == [0, 1, 2])
    }

    @Test func aLateAnswerIsNotSentFromTheHandlerAndIsDroppedWhenThePeripheralStops() async throws {
        let sent = Sent(), answers = TimedNotifications(.late(.seconds(60)))
        answers.send { sent.append(1) }
        #expect(sent.all.isEmpty)
        answers.stop()
        try await Task.sleep(for: .milliseconds(50))
        #expect(sent.all.isEmpty, "nothing goes out after stop")
    }

    @Test func lateAnswersGoOutInTheOrderMade() async throws {
        let sent = Sent(), answers = TimedNotifications(.late(.milliseconds(5)))
        for value in 0..<200 { answers.send { sent.append(value) } }
        // Waits for all 200 however slow the machine; what is checked is the order, not the time.
        for _ in 0..<6000 where sent.all.count < 200 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(sent.all == Array(0..<200))
    }
}
