import CDBus
import Foundation
import Synchronization

/// A connection to a D-Bus bus. Safe to use from any task: messages are sent from the caller's
/// thread under the connection loop's lock; receiving, dispatching and timeouts run on the
/// loop's thread.
public final class BusConnection: @unchecked Sendable {
    public enum Bus: Sendable, Hashable {
        case system
        case session
        case address(String)
    }

    let loop: ConnectionLoop
    public let uniqueName: String
    let router = MessageRouter()
    private let closed = Atomic<Bool>(false)
    private let disconnected = Atomic<Bool>(false)
    private let outstanding = Mutex<[ObjectIdentifier: PendingReply]>([:])

    /// Opens a private connection and registers with the bus.
    public init(_ bus: Bus) throws(BusError) {
        dbus_threads_init_default()
        var error = DBusError()
        dbus_error_init(&error)
        let raw: OpaquePointer?
        switch bus {
        case .system: raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: raw = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case let .address(address):
            raw = dbus_connection_open_private(address, &error)
            if let raw, dbus_error_is_set(&error) == 0, dbus_bus_register(raw, &error) == 0 {
                dbus_connection_close(raw)
                dbus_connection_unref(raw)
                throw BusError.take(&error)
            }
        }
        guard let raw, dbus_error_is_set(&error) == 0 else {
            if dbus_error_is_set(&error) != 0 { throw BusError.take(&error) }
            throw BusError(name: BusError.failed, message: "cannot connect to the bus")
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        do {
            loop = try ConnectionLoop(connection: raw)
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
        // The filter keeps the router alive until libdbus drops the filter with the connection.
        let context = Unmanaged.passRetained(router).toOpaque()
        dbus_connection_add_filter(raw, { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            let router = Unmanaged<MessageRouter>.fromOpaque(data).takeUnretainedValue()
            return router.route(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }, context, { data in
            guard let data else { return }
            Unmanaged<MessageRouter>.fromOpaque(data).release()
        })
        router.connection = self
        loop.onDisconnect = { [weak self] in self?.connectionDropped() }
        loop.start(name: "dbus \(uniqueName)")
    }

    deinit {
        close()
    }

    /// Closes the connection; pending calls fail with `Disconnected`.
    public func close() {
        guard !closed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // Before the loop stops: the calls' cancellations are jobs the loop runs as it closes.
        abandonOutstanding(BusError(name: BusError.disconnected, message: "the connection is closed"))
        loop.stop()
        router.finishAll()
    }

    /// The connection's loop thread as a task executor. A task that prefers it
    /// (`withTaskExecutorPreference(connection.executor) { … }`) is resumed by a reply right on
    /// the thread that received it, instead of being handed to another thread: the fastest way
    /// to make many calls in a row. Code running there holds up the connection's dispatching,
    /// so it must not block; after `close()` such tasks run on the global executor.
    public var executor: any TaskExecutor { loop }

    public var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) || disconnected.load(ordering: .sequentiallyConsistent) }

    /// The bus went away: every outstanding call fails, every signal stream ends.
    private func connectionDropped() {
        disconnected.store(true, ordering: .sequentiallyConsistent)
        abandonOutstanding(BusError(name: BusError.disconnected, message: "the connection to the bus was lost"))
        router.finishAll()
    }

    /// Fails every outstanding call with `error`, also one that has not started waiting yet,
    /// and has the loop cancel their libdbus side (no reply can come for them any more).
    private func abandonOutstanding(_ error: BusError) {
        let waiting = outstanding.withLock { all in defer { all.removeAll() }; return Array(all.values) }
        for pending in waiting {
            pending.abandon(error)
            loop.perform { _ in pending.cancelCall() }
        }
    }

    // MARK: Calls

    /// Calls a method and returns its reply's arguments. A D-Bus error reply is thrown as a
    /// `BusError` with its name; no reply within `timeout` throws `org.freedesktop.DBus.Error.NoReply`.
    public func call(
        destination: String?, path: String, interface: String?, member: String,
        _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        let message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(arguments)
        let reply = try await send(message, timeout: timeout)
        if reply.isError {
            let text = (try? reply.arguments().first?.stringValue) ?? nil
            throw BusError(name: reply.errorName ?? BusError.failed, message: text ?? "")
        }
        return try reply.arguments()
    }

    /// Sends a message and waits for its reply message.
    func send(_ message: DBusMessage, timeout: Duration) async throws -> DBusMessage {
        guard !isClosed else { throw BusError(name: BusError.disconnected, message: "the connection is closed") }
        let pending = PendingReply()
        let key = ObjectIdentifier(pending)
        outstanding.withLock { $0[key] = pending }
        defer { outstanding.withLock { _ = $0.removeValue(forKey: key) } }
        // Closed or dropped since the guard: `abandonOutstanding` may have missed this call.
        if isClosed {
            throw BusError(name: BusError.disconnected, message: disconnected.load(ordering: .sequentiallyConsistent)
                ? "the connection to the bus was lost" : "the connection is closed")
        }
        let milliseconds = Int32(clamping: max(1, timeout.milliseconds))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DBusMessage, any Error>) in
                // Abandoned before it waited (closed or dropped meanwhile): already resumed.
                guard pending.install(continuation) else { return }
                // Sent from this thread (holding the loop's lock); the reply is dispatched on
                // the loop thread, possibly before the notify function is set: hence the check.
                let sent: Bool? = loop.withOpenConnection { connection in
                    var call: OpaquePointer?
                    guard dbus_connection_send_with_reply(connection, message.raw, &call, milliseconds) != 0, let call else { return false }
                    pending.setCall(call)
                    let box = Unmanaged.passRetained(pending).toOpaque()
                    dbus_pending_call_set_notify(call, { call, data in
                        guard let call, let data else { return }
                        Unmanaged<PendingReply>.fromOpaque(data).takeUnretainedValue().complete(call)
                    }, box, { data in
                        guard let data else { return }
                        Unmanaged<PendingReply>.fromOpaque(data).release()
                    })
                    if dbus_pending_call_get_completed(call) != 0 {
                        pending.complete(call)
                    } else if pending.isFinished {
                        // Cancelled or abandoned while it was being sent: the loop's cancel job
                        // may have run before the call existed.
                        pending.cancelCall()
                    }
                    return true
                }
                if sent != true { pending.fail(BusError(name: BusError.disconnected, message: "the bus connection is closed")) }
            }
        } onCancel: {
            // Only a call that stopped waiting is cancelled in libdbus: one whose task was
            // cancelled before it began still goes out and waits for its reply (cancelling it
            // after the send would leave it waiting forever).
            if pending.fail(CancellationError()) {
                loop.perform { _ in pending.cancelCall() }
            }
        }
    }

    /// Sends a message that needs no reply (a signal, a reply to a call), from this thread.
    func sendOneWay(_ message: DBusMessage) {
        _ = loop.withOpenConnection { connection in
            dbus_connection_send(connection, message.raw, nil)
        }
    }

    public func emitSignal(path: String, interface: String, member: String, _ arguments: [DBusValue] = []) throws(BusError) {
        let message = try DBusMessage.signal(path: path, interface: interface, member: member)
        try message.append(arguments)
        sendOneWay(message)
    }

    // MARK: Names

    /// Asks the bus for a well-known name; fails if another connection owns it.
    public func requestName(_ name: String) async throws {
        let reply = try await call(destination: StandardBusNames.bus, path: StandardBusNames.busPath, interface: StandardBusNames.bus,
                                   member: "RequestName", [.string(name), .uint32(UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))])
        guard reply.first?.uint32Value == UInt32(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) || reply.first?.uint32Value == UInt32(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER) else {
            throw BusError(name: BusError.addressInUse, message: "the name \(name) is owned by another process")
        }
    }

    /// Whether a name currently has an owner on the bus.
    public func nameHasOwner(_ name: String) async throws -> Bool {
        let reply = try await call(destination: StandardBusNames.bus, path: StandardBusNames.busPath, interface: StandardBusNames.bus,
                                   member: "NameHasOwner", [.string(name)])
        return reply.first?.boolValue ?? false
    }
}

/// One outstanding call: resumed exactly once, by the reply, a failure or cancellation. Its
/// libdbus side (`complete`, `cancelCall`) runs under the connection loop's lock.
final class PendingReply: @unchecked Sendable {
    private enum State {
        /// Before `install`.
        case starting
        case waiting(CheckedContinuation<DBusMessage, any Error>)
        /// Abandoned before `install`, which then resumes with this error.
        case abandoned(any Error)
        case finished
    }

    private let state = Mutex<State>(.starting)
    /// Our reference to libdbus's pending call, until it has completed or been cancelled.
    private let callLock = NSLock()
    private var call: OpaquePointer?

    /// False when the call was abandoned before: the continuation is then resumed with that error.
    func install(_ continuation: CheckedContinuation<DBusMessage, any Error>) -> Bool {
        let early: (any Error)? = state.withLock { state in
            guard case let .abandoned(error) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .finished
            return error
        }
        guard let early else { return true }
        continuation.resume(throwing: early)
        return false
    }

    /// True once the call has been resumed (or abandoned).
    var isFinished: Bool {
        state.withLock { state in
            switch state {
            case .starting, .waiting: false
            case .abandoned, .finished: true
            }
        }
    }

    /// The waiting continuation, which no one else will resume.
    private func takeContinuation() -> CheckedContinuation<DBusMessage, any Error>? {
        state.withLock { state in
            guard case let .waiting(continuation) = state else { return nil }
            state = .finished
            return continuation
        }
    }

    func setCall(_ pending: OpaquePointer) {
        callLock.lock()
        call = pending
        callLock.unlock()
    }

    private func takeCall() -> OpaquePointer? {
        callLock.lock()
        defer { callLock.unlock() }
        let taken = call
        call = nil
        return taken
    }

    /// Under the loop's lock: stops waiting for the reply.
    func cancelCall() {
        guard let pending = takeCall() else { return }
        dbus_pending_call_cancel(pending)
        dbus_pending_call_unref(pending)
    }

    func complete(_ call: OpaquePointer) {
        // Our reference to the pending call goes once it has completed (libdbus keeps its own
        // while it runs the notify function); the box retaining this object goes with it.
        defer { if let pending = takeCall() { dbus_pending_call_unref(pending) } }
        guard let continuation = takeContinuation() else { return }
        guard let raw = dbus_pending_call_steal_reply(call) else {
            continuation.resume(throwing: BusError(name: BusError.failed, message: "the call completed without a reply"))
            return
        }
        continuation.resume(returning: DBusMessage(adopting: raw))
    }

    /// Resumes a waiting call with `error`; false if it was not waiting. Before `install` nothing
    /// happens, so a call made by a task that is already cancelled (in its cleanup, say) still
    /// goes out, as it always has.
    @discardableResult
    func fail(_ error: any Error) -> Bool {
        guard let continuation = takeContinuation() else { return false }
        continuation.resume(throwing: error)
        return true
    }

    /// The connection closed or dropped: fails the call, also one not yet waiting.
    func abandon(_ error: any Error) {
        let continuation: CheckedContinuation<DBusMessage, any Error>? = state.withLock { state in
            switch state {
            case .starting:
                state = .abandoned(error)
                return nil
            case let .waiting(continuation):
                state = .finished
                return continuation
            case .abandoned, .finished:
                return nil
            }
        }
        continuation?.resume(throwing: error)
    }
}
