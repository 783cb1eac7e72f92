import CDBus
import Foundation
import Synchronization

/// A connection to a D-Bus bus. Safe to use from any task: every libdbus call on it runs on
/// the connection's own loop thread.
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
        loop.stop()
        router.finishAll()
    }

    public var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) || disconnected.load(ordering: .sequentiallyConsistent) }

    /// The bus went away: every outstanding call fails, every signal stream ends.
    private func connectionDropped() {
        disconnected.store(true, ordering: .sequentiallyConsistent)
        let waiting = outstanding.withLock { all in defer { all.removeAll() }; return Array(all.values) }
        for pending in waiting { pending.fail(BusError(name: BusError.disconnected, message: "the connection to the bus was lost")) }
        router.finishAll()
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
        if disconnected.load(ordering: .sequentiallyConsistent) {
            throw BusError(name: BusError.disconnected, message: "the connection to the bus was lost")
        }
        let milliseconds = Int32(clamping: max(1, timeout.milliseconds))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DBusMessage, any Error>) in
                pending.install(continuation)
                loop.perform { connection in
                    var call: OpaquePointer?
                    guard dbus_connection_send_with_reply(connection, message.raw, &call, milliseconds) != 0, let call else {
                        pending.fail(BusError(name: BusError.disconnected, message: "the bus connection is closed"))
                        return
                    }
                    pending.call = call
                    let box = Unmanaged.passRetained(pending).toOpaque()
                    dbus_pending_call_set_notify(call, { call, data in
                        guard let call, let data else { return }
                        Unmanaged<PendingReply>.fromOpaque(data).takeUnretainedValue().complete(call)
                    }, box, { data in
                        guard let data else { return }
                        Unmanaged<PendingReply>.fromOpaque(data).release()
                    })
                    if dbus_pending_call_get_completed(call) != 0 { pending.complete(call) }
                }
            }
        } onCancel: {
            pending.fail(CancellationError())
            loop.perform { _ in if let call = pending.call { dbus_pending_call_cancel(call) } }
        }
    }

    /// Sends a message that needs no reply (a signal, a reply to a call).
    func sendOneWay(_ message: DBusMessage) {
        loop.perform { connection in
            _ = dbus_connection_send(connection, message.raw, nil)
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
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                   member: "RequestName", [.string(name), .uint32(UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))])
        guard reply.first?.uint32Value == UInt32(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) || reply.first?.uint32Value == UInt32(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER) else {
            throw BusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "the name \(name) is owned by another process")
        }
    }

    /// Whether a name currently has an owner on the bus.
    public func nameHasOwner(_ name: String) async throws -> Bool {
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                   member: "NameHasOwner", [.string(name)])
        return reply.first?.boolValue ?? false
    }
}

/// One outstanding call: resumed exactly once, by the reply, a failure or cancellation.
final class PendingReply: @unchecked Sendable {
    private let state = Mutex<CheckedContinuation<DBusMessage, any Error>?>(nil)
    /// Touched only on the loop thread.
    var call: OpaquePointer?

    func install(_ continuation: CheckedContinuation<DBusMessage, any Error>) {
        state.withLock { $0 = continuation }
    }

    func complete(_ call: OpaquePointer) {
        guard let raw = dbus_pending_call_steal_reply(call) else { return }
        let reply = DBusMessage(adopting: raw)
        state.withLock { $0.take() }?.resume(returning: reply)
    }

    func fail(_ error: any Error) {
        state.withLock { $0.take() }?.resume(throwing: error)
    }
}
