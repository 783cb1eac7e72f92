import CDBus
import Foundation
import Synchronization

/// The thread that runs a libdbus connection: it polls the connection's file descriptors
/// (libdbus "watches") and a wakeup eventfd, fires libdbus timeouts (these time out method
/// calls), runs jobs queued by other threads, dispatches incoming messages, and closes the
/// connection at the end.
///
/// Every use of the connection holds `ioLock`, which the loop lets go only while it sleeps in
/// poll(). So another thread may send a message itself (`withOpenConnection`) instead of
/// queueing a job and waking the loop, and still no two threads are ever inside libdbus on
/// this connection at once: a send that finds the link broken frees libdbus's watches, and
/// the loop only touches watches under the same lock.
final class ConnectionLoop: TaskExecutor, @unchecked Sendable {
    private let jobs = Mutex<[@Sendable (OpaquePointer) -> Void]>([])
    /// Tasks that prefer this loop as their executor (`BusConnection.executor`); once the loop
    /// has ended (`nil`), they go to the global executor.
    private let taskJobs = Mutex<[UnownedJob]?>([])
    private let wakeupFD: Int32
    /// Recursive: libdbus calls the hooks below, and the loop's dispatch runs handlers that send.
    private let ioLock = NSRecursiveLock()
    /// What libdbus's callbacks registered; only under `ioLock`.
    private var watches: [OpaquePointer] = []
    private var timeouts: [OpaquePointer: ContinuousClock.Instant] = [:]
    /// False once the loop has closed the connection; only under `ioLock`.
    private var isOpen = true
    private let running = Atomic<Bool>(true)
    private var thread: Thread?
    /// pthread_self() of the loop thread, once it runs.
    private let loopThreadID = Atomic<UInt>(0)
    private var reportedDisconnect = false
    /// Signalled once the loop has closed and released the connection.
    private let ended = DispatchSemaphore(value: 0)
    /// The longest the loop sleeps before it looks at its timeouts again.
    private static let maximumPoll = 1000
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
        ioLock.lock()
        defer { ioLock.unlock() }
        // libdbus adds and removes watches and timeouts with `ioLock` held (every use of the
        // connection holds it). A toggle may also come from a thread that drops a received
        // message (libdbus reads again once queued messages are freed): it only wakes the loop,
        // which reads the watches' state under the lock. A change made on another thread wakes
        // the loop so that its next poll sees it.
        dbus_connection_set_watch_functions(connection, { watch, data in
            guard let watch, let data else { return 0 }
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue()
            loop.watches.append(watch)
            loop.wakeUnlessOnLoop()
            return 1
        }, { watch, data in
            guard let watch, let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().watches.removeAll { $0 == watch }
        }, { _, data in
            guard let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().wakeUnlessOnLoop()
        }, context, nil)
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
        // On the loop thread itself these need no wake: it writes and dispatches before it sleeps.
        dbus_connection_set_wakeup_main_function(connection, { data in
            guard let data else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().wakeUnlessOnLoop()
        }, context, nil)
        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            guard let data, status == DBUS_DISPATCH_DATA_REMAINS else { return }
            Unmanaged<ConnectionLoop>.fromOpaque(data).takeUnretainedValue().wakeUnlessOnLoop()
        }, context, nil)
        let thread = Thread { [self] in run() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    private func arm(_ timeout: OpaquePointer) {
        guard dbus_timeout_get_enabled(timeout) != 0 else {
            timeouts[timeout] = nil
            return
        }
        let interval = Int(dbus_timeout_get_interval(timeout))
        timeouts[timeout] = ContinuousClock.now.advanced(by: .milliseconds(interval))
        // The loop looks at its timeouts at least every `maximumPoll` ms; a shorter one must wake it.
        if interval < Self.maximumPoll { wakeUnlessOnLoop() }
    }

    /// pthread_self() of the loop thread as UInt; 0 before it runs.
    var threadID: UInt { loopThreadID.load(ordering: .relaxed) }

    private func wakeUnlessOnLoop() {
        if UInt(pthread_self()) != loopThreadID.load(ordering: .relaxed) { wake() }
    }

    /// Runs `body` with the connection on the calling thread, holding `ioLock`; nil once the
    /// loop has closed the connection.
    func withOpenConnection<T>(_ body: (OpaquePointer) -> T) -> T? {
        ioLock.lock()
        defer { ioLock.unlock() }
        return isOpen ? body(connection) : nil
    }

    /// Runs `job` on the loop thread with the connection (at the latest just before it closes).
    func perform(_ job: @escaping @Sendable (OpaquePointer) -> Void) {
        jobs.withLock { $0.append(job) }
        wake()
    }

    /// TaskExecutor: runs the job on the loop thread, between dispatching and the next poll.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let queued = taskJobs.withLock { queue -> Bool in
            guard queue != nil else { return false }
            queue!.append(unowned)
            return true
        }
        if queued {
            wakeUnlessOnLoop()
        } else {
            globalConcurrentExecutor.enqueue(unowned)
        }
    }

    /// Runs the queued tasks' jobs (not holding `ioLock`: they are the caller's code), and what
    /// they queue meanwhile; dispatches what arrived in between.
    private func runTaskJobs() {
        while true {
            let batch = taskJobs.withLock { queue -> [UnownedJob] in
                defer { queue?.removeAll(keepingCapacity: true) }
                return queue ?? []
            }
            if batch.isEmpty { return }
            ioLock.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            ioLock.lock()
            while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        }
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeupFD, &one, 8)
    }

    /// Ends the loop and, unless called on the loop thread itself, waits (at most 5 s) until it
    /// has closed and released the connection. A command that closes its bus and exits must not
    /// leave the loop thread inside libdbus while the process tears down: `tsgateway scan` was
    /// seen to die of SIGSEGV right after its last line in the end-to-end suite.
    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        wake()
        guard thread != nil, UInt(pthread_self()) != loopThreadID.load(ordering: .relaxed) else { return }
        _ = ended.wait(timeout: .now() + 5)
    }

    private func run() {
        loopThreadID.store(UInt(pthread_self()), ordering: .relaxed)
        var descriptors: [pollfd] = []
        var polled: [OpaquePointer] = []
        var fired: [OpaquePointer] = []
        ioLock.lock()
        while running.load(ordering: .sequentiallyConsistent) {
            descriptors.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeupFD, events: Int16(POLLIN), revents: 0))
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { events |= Int16(POLLIN) }
                if flags & UInt32(DBUS_WATCH_WRITABLE.rawValue) != 0 { events |= Int16(POLLOUT) }
                descriptors.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            let nextDeadline = timeouts.values.min()
            var wait = nextDeadline.map { max(0, ($0 - ContinuousClock.now).milliseconds) } ?? Self.maximumPoll
            if taskJobs.withLock({ !($0?.isEmpty ?? true) }) { wait = 0 }
            ioLock.unlock()
            _ = poll(&descriptors, nfds_t(descriptors.count), Int32(min(wait, Self.maximumPoll)))
            ioLock.lock()

            if descriptors[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeupFD, &counter, 8)
            }
            // A watch removed while the loop slept (a send found the link broken) is gone.
            for (index, watch) in polled.enumerated() where descriptors[index + 1].revents != 0 && watches.contains(watch) {
                let revents = descriptors[index + 1].revents
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= UInt32(DBUS_WATCH_READABLE.rawValue) }
                if revents & Int16(POLLOUT) != 0 { flags |= UInt32(DBUS_WATCH_WRITABLE.rawValue) }
                if revents & Int16(POLLHUP) != 0 { flags |= UInt32(DBUS_WATCH_HANGUP.rawValue) }
                if revents & Int16(POLLERR) != 0 { flags |= UInt32(DBUS_WATCH_ERROR.rawValue) }
                dbus_watch_handle(watch, flags)
            }
            let now = ContinuousClock.now
            if let earliest = timeouts.values.min(), earliest <= now {
                fired.removeAll(keepingCapacity: true)
                for (timeout, deadline) in timeouts where deadline <= now { fired.append(timeout) }
                // A libdbus timeout repeats until removed, so it is armed again before it runs;
                // after dbus_timeout_handle it may be freed (a call that timed out drops its
                // timeout), and only the remove and toggle hooks say what became of it.
                for timeout in fired where timeouts[timeout] != nil {
                    timeouts[timeout] = now.advanced(by: .milliseconds(Int(dbus_timeout_get_interval(timeout))))
                    dbus_timeout_handle(timeout)
                }
            }
            for job in jobs.withLock({ queued in defer { queued.removeAll() }; return queued }) { job(connection) }
            while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
            runTaskJobs()
            if !reportedDisconnect && dbus_connection_get_is_connected(connection) == 0 {
                reportedDisconnect = true
                onDisconnect?()
            }
        }
        for job in jobs.withLock({ queued in defer { queued.removeAll() }; return queued }) { job(connection) }
        for job in taskJobs.withLock({ queue in defer { queue = nil }; return queue ?? [] }) { globalConcurrentExecutor.enqueue(job) }
        isOpen = false
        dbus_connection_flush(connection)
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        ioLock.unlock()
        ended.signal()
    }
}

extension Duration {
    var milliseconds: Int {
        let parts = components
        return Int(parts.seconds) * 1000 + Int(parts.attoseconds / 1_000_000_000_000_000)
    }
}
