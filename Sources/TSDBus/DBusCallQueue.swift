/// Handles the calls given to it one after another, in the order they arrived on the bus.
///
/// An exported method runs each call in a task of its own by default, so two calls that arrive
/// back to back may be handled in either order. Methods that share a queue are handled in
/// arrival order instead, each after the one before it has finished: what a GATT server needs,
/// because bluetoothd passes a central's write without response on without waiting for it to be
/// handled, and the read the central sends next must see what it wrote.
public final class DBusCallQueue: Sendable {
    private let calls: AsyncStream<@Sendable () async -> Void>.Continuation

    public init() {
        let (stream, calls) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.calls = calls
        Task { for await call in stream { await call() } }
    }

    /// Queues `call` behind those already given; called on the bus's dispatch thread, which sees
    /// messages in the order they arrived.
    func enqueue(_ call: @escaping @Sendable () async -> Void) {
        calls.yield(call)
    }

    deinit { calls.finish() }
}
