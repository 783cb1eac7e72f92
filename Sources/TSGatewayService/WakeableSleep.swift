import Synchronization

/// A sleep another task can end early: the reconnect loop's backoff, cut short when an operation
/// connected the watch meanwhile. A wake while nobody sleeps is kept for the next sleep, so a
/// connect between a failed attempt and the sleep after it is not missed.
///
/// Not an AsyncStream: cancelling the task that awaits a stream's iterator finishes the stream,
/// so after the first sleep that ran to its end every later one returned at once and the loop
/// retried a missing adapter about 200 times a second.
final class WakeableSleep: Sendable {
    private struct State {
        var issued = 0
        var active: Int?
        var sleeper: CheckedContinuation<Void, Never>?
        var pending = false
    }
    private let state = Mutex(State())

    /// Returns after `duration`, on `wake()`, or when the task is cancelled.
    func sleep(for duration: Duration) async {
        let ticket: Int? = state.withLock { state in
            if state.pending { state.pending = false; return nil }
            state.issued += 1
            state.active = state.issued
            return state.issued
        }
        guard let ticket else { return }
        let timer = Task { try? await Task.sleep(for: duration); self.end(ticket) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state in
                    guard state.active == ticket else { return true }
                    state.sleeper = continuation
                    return false
                }
                if ended { continuation.resume() }
            }
        } onCancel: {
            self.end(ticket)
        }
        timer.cancel()
    }

    /// Ends the current sleep, or the next one before it starts.
    func wake() {
        let ticket = state.withLock { state -> Int? in
            if state.active == nil { state.pending = true }
            return state.active
        }
        if let ticket { end(ticket) }
    }

    /// Forgets a wake nobody slept through (the loop saw the connection itself).
    func forgetWake() { state.withLock { $0.pending = false } }

    private func end(_ ticket: Int) {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.active == ticket else { return nil }
            state.active = nil
            defer { state.sleeper = nil }
            return state.sleeper
        }
        sleeper?.resume()
    }
}
