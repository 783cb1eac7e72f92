/// What was received is stored: runs `write`, a store write of data the gateway already holds
/// (an alarm edit made on the wrist, a live stage or session change, heart-rate samples, a
/// smart-wake decision, an upload server's answer), to its end even when the task that asks for
/// it is being cancelled because the link dropped or the daemon stops.
///
/// GRDB's async writes throw `CancellationError` in a cancelled task: they check the task before
/// the transaction begins and interrupt SQLite when the cancellation comes during it, and the
/// transaction is rolled back. Here the write runs in a task of its own, which the caller's
/// cancellation does not reach, and the caller waits for it. A write takes milliseconds (at most
/// the busy timeout while another process writes), so a stopping daemon still stops promptly.
@discardableResult
public func shieldedFromCancellation<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async throws -> T {
    try await Task { try await write() }.value
}
