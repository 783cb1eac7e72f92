import CDBus
import Foundation
import Synchronization

/// The one thread that owns a libdbus connection: it polls the connection's file descriptors
/// (libdbus "watches") and a wakeup eventfd, fires libdbus timeouts (these time out method
/// calls), runs jobs queued by other threads, and dispatches incoming messages.
final class ConnectionLoop: @unchecked Sendable {
    private let jobs = Mutex<[@Sendable (OpaquePointer) -> Void]>([])
    private let wakeupFD: Int32
    private var watches: [OpaquePointer] = []
    private var timeouts: [OpaquePointer: ContinuousClock.Instant] = [:]
    private let running = Atomic<Bool>(true)
    private var thread: Thread?
    private var reportedDisconnect = false
    let connection: OpaquePointer
    /// Called once, on the loop thread, when the connection drops.
    var onDisconnect: (@Sendable () -> Void)?

    init(connection: OpaquePointer) throws(BusError) {
        self.connection = connection
        wakeupFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeupFD >= 0 else { throw BusError(name: BusError.failed, message: "cannot create an eventfd: \(String(cString: strerror(errno)))") }
    }

    deinit { close(wakeupFD) }

    /// Installs the libdbus hooks and starts the thread.
    func start(name: String) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(connection, { watch, data in
            guard let watch, let data else { return 0 }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().watches.append(watch)
            return 1
        }, { watch, data in
            guard let watch, let data else { return }
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue()
            loop.watches.removeAll { $0 == watch }
        }, { _, _ in }, context, nil)
        dbus_connection_set_timeout_functions(connection, { timeout, data in
            guard let timeout, let data else { return 0 }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().arm(timeout)
            return 1
        }, { timeout, data in
            guard let timeout, let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().timeouts[timeout] = nil
        }, { timeout, data in
            guard let timeout, let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().arm(timeout)
        }, context, nil)
        dbus_connection_set_wakeup_main_function(connection, { data in
            guard let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().wake()
        }, context, nil)
        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            guard let data, status == DBUS_DISPATCH_DATA_REMAINS else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().wake()
        }, context, nil)
        let thread = Thread { [self] in run() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    private func arm(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] = ContinuousClock.now.advanced(by: .milliseconds(Int(dbus_timeout_get_interval(timeout))))
        } else {
            timeouts[timeout] = nil
        }
    }

    /// Runs `job` on the loop thread with the connection (at the latest just before it closes).
    func perform(_ job: @escaping @Sendable (OpaquePointer) -> Void) {
        jobs.withLock { $0.append(job) }
        wake()
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeupFD, &one, 8)
    }

    /// Ends the loop; the loop thread then closes and releases the connection.
    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        wake()
    }

    private func run() {
        while running.load(ordering: .sequentiallyConsistent) {
            var descriptors = [pollfd(fd: wakeupFD, events: Int16(POLLIN), revents: 0)]
            var polled: [OpaquePointer] = []
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { events |= Int16(POLLIN) }
                if flags & UInt32(DBUS_WATCH_WRITABLE.rawValue) != 0 { events |= Int16(POLLOUT) }
                descriptors.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            let now = ContinuousClock.now
            let wait = timeouts.values.min().map { max(0, ($0 - now).milliseconds) } ?? 1000
            _ = poll(&descriptors, nfds_t(descriptors.count), Int32(min(wait, 1000)))

            if descriptors[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeupFD, &counter, 8)
            }
            for (index, watch) in polled.enumerated() where descriptors[index + 1].revents != 0 && watches.contains(watch) {
                let revents = descriptors[index + 1].revents
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= UInt32(DBUS_WATCH_READABLE.rawValue) }
                if revents & Int16(POLLOUT) != 0 { flags |= UInt32(DBUS_WATCH_WRITABLE.rawValue) }
                if revents & Int16(POLLHUP) != 0 { flags |= UInt32(DBUS_WATCH_HANGUP.rawValue) }
                if revents & Int16(POLLERR) != 0 { flags |= UInt32(DBUS_WATCH_ERROR.rawValue) }
                dbus_watch_handle(watch, flags)
            }
            let fired = timeouts.filter { $0.value <= ContinuousClock.now }.map(\.key)
            for timeout in fired where timeouts[timeout] != nil {
                timeouts[timeout] = nil
                dbus_timeout_handle(timeout)
                if dbus_timeout_get_enabled(timeout) != 0 { arm(timeout) }
            }
            for job in jobs.withLock({ queued in defer { queued.removeAll() }; return queued }) { job(connection) }
            while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
            if !reportedDisconnect && dbus_connection_get_is_connected(connection) == 0 {
                reportedDisconnect = true
                onDisconnect?()
            }
        }
        for job in jobs.withLock({ queued in defer { queued.removeAll() }; return queued }) { job(connection) }
        dbus_connection_flush(connection)
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }
}

extension Duration {
    var milliseconds: Int {
        let parts = components
        return Int(parts.seconds) * 1000 + Int(parts.attoseconds / 1_000_000_000_000_000)
    }
}
