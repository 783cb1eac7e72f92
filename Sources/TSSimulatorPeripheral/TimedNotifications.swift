import Foundation
import TSTransport

/// A simulated peripheral's notifications, sent when its `AnswerTiming` says: `immediate` and
/// `beforeResponse` at once (from inside the write handler that made them, so before the write's
/// acknowledgement where the characteristic takes requests only); `late` each its delay after it
/// was made, in the order made. A stream keeps its pace, shifted by the delay, rather than
/// waiting the delay once per notification.
public final class TimedNotifications: Sendable {
    public let timing: AnswerTiming
    private let pending: AsyncStream<(due: ContinuousClock.Instant, send: @Sendable () -> Void)>.Continuation?
    private let sender: Task<Void, Never>?

    public init(_ timing: AnswerTiming) {
        self.timing = timing
        guard case let .late(delay) = timing, delay > .zero else {
            (pending, sender) = (nil, nil)
            return
        }
        let (stream, continuation) = AsyncStream<(due: ContinuousClock.Instant, send: @Sendable () -> Void)>.makeStream()
        pending = continuation
        sender = Task {
            for await notification in stream {
                try? await Task.sleep(until: notification.due, clock: .continuous)
                if Task.isCancelled { return }
                notification.send()
            }
        }
    }

    /// Sends at once, or queues it for its due time.
    public func send(_ notification: @escaping @Sendable () -> Void) {
        guard let pending, case let .late(delay) = timing else {
            notification()
            return
        }
        pending.yield((ContinuousClock.now + delay, notification))
    }

    /// Drops what is still queued (the peripheral is stopping).
    public func stop() {
        pending?.finish()
        sender?.cancel()
    }

    deinit { stop() }
}
