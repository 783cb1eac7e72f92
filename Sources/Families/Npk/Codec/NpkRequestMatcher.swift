/// The gateway's frame sequence: 1 after a reset, then 2, 3 … 65535, 1 (0 is never used).
public struct NpkSequenceCounter: Sendable, Hashable {
    public private(set) var last: UInt16 = 0

    public init() {}

    public mutating func next() -> UInt16 {
        last = last == .max ? 1 : last + 1
        return last
    }

    /// At every connect and after a bind.
    public mutating func reset() { last = 0 }
}

/// Matches the watch's frames to the one request in flight, the way the SDK does: a frame answers
/// it only when cmd, key and sequence are all equal; every other frame is a notification, routed
/// by cmd and key. Pure state: the owner sends the frames, runs the timers and calls
/// `abandon()` on a timeout.
public struct NpkRequestMatcher: Sendable {
    public enum Route: Sendable, Hashable {
        /// The answer to the request in flight (which is no longer in flight).
        case response(NpkFrame)
        /// Anything else from the watch: a notification for the listener of its cmd and key.
        case notification(NpkFrame)
    }

    public private(set) var sequence = NpkSequenceCounter()
    /// The request in flight, as sent.
    public private(set) var pending: NpkFrame?

    public init() {}

    /// The frame for a new request, which is then in flight; an error while another one is.
    public mutating func request(_ command: NpkCommand, payload: [UInt8] = []) throws -> NpkFrame {
        if let pending {
            throw NpkError(.requestInFlight, "\(command) cannot be sent while \(pending.command) seq \(pending.sequence) waits for its answer")
        }
        let frame = NpkFrame(command: command, sequence: sequence.next(), payload: payload)
        pending = frame
        return frame
    }

    /// The request in flight again, same sequence, with the retransmission flag; nil when none is.
    public func retransmission() -> NpkFrame? {
        guard var frame = pending else { return nil }
        frame.flags.insert(.retransmission)
        return frame
    }

    public mutating func route(_ frame: NpkFrame) -> Route {
        if let pending, pending.command == frame.command, pending.sequence == frame.sequence {
            self.pending = nil
            return .response(frame)
        }
        return .notification(frame)
    }

    /// The request in flight got no answer in time: forget it (a late answer is a notification).
    public mutating func abandon() { pending = nil }

    /// A new connection or a completed bind: sequence from 1, nothing in flight.
    public mutating func reset() {
        sequence.reset()
        pending = nil
    }
}
