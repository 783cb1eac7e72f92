import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts the programs the tests run (the CLI, `serve`, dbus-daemon, mosquitto, dbusmock, a
/// scripted server) with nothing of the test process but what each is given.
///
/// Tests of one process run side by side, and a child holds every descriptor it inherits until
/// it ends. Foundation's `Process` closes, in the child, only the descriptors it found in
/// /proc/self/fd a moment before it spawned; one that another thread opened in that moment
/// passes on. Swift Testing leaves an exit test's back channel inheritable until its own child
/// has it, so a `serve` started in that moment held the back channel of another test's exit
/// test, whose parent then waited for an end of file that came only when `serve` was killed
/// minutes later (the flake ledger's stalled pair). Here the child closes every descriptor above
/// standard error as it starts (`posix_spawn_file_actions_addclosefrom_np`), whenever the other
/// threads opened theirs, and the pipes made here are close-on-exec, so no other test's child
/// holds them either. Signals start at their defaults with none blocked, as from a login shell:
/// a test thread's mask or an ignored SIGTERM never reaches the program.
public enum Spawn {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// /dev/null.
        case null
        /// The test process's own stream of that number.
        case inherit
        /// This open descriptor of the test process (a pipe's end, a log file).
        case descriptor(Int32)
        /// This file, opened for writing (created 0644, appended to).
        case file(String)
    }

    /// A pipe whose two ends close on exec: only a child given an end as a standard stream has it.
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard GNU.pipe2(&ends, O_CLOEXEC) == 0 else { throw BusTestError("pipe2 failed: \(String(cString: strerror(errno)))") }
        return (ends[0], ends[1])
    }

    /// Starts `executable` with `arguments`; `environment` is the child's whole environment (nil:
    /// the test's), `currentDirectory` where it runs (nil: the test's own).
    public static func start(_ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
                             currentDirectory: String? = nil,
                             stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit) throws -> SpawnedProcess {
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        for (number, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&files, number, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit: break
            case let .descriptor(descriptor): posix_spawn_file_actions_adddup2(&files, descriptor, number)
            case let .file(path): posix_spawn_file_actions_addopen(&files, number, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            }
        }
        guard GNU.addCloseFrom(&files, 3) == 0 else { throw BusTestError("posix_spawn_file_actions_addclosefrom_np failed") }
        if let currentDirectory { _ = GNU.addChdir(&files, currentDirectory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // A process group of its own, as Foundation's `Process` gave: a terminal's Ctrl-C on the test run does not reach it twice.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &files, &attributes, &argv, &envp)
        guard status == 0 else { throw BusTestError("cannot start \(executable): \(String(cString: strerror(status)))") }
        return SpawnedProcess(pid: pid)
    }
}

/// glibc's GNU extensions that Swift's Glibc module does not declare (it is imported without
/// `_GNU_SOURCE`), looked up once: `pipe2` (2.9), `posix_spawn_file_actions_addchdir_np` (2.29),
/// `posix_spawn_file_actions_addclosefrom_np` (2.34; Debian 12 has 2.36).
private enum GNU {
    static let pipe2 = function("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    static let addChdir = function("posix_spawn_file_actions_addchdir_np",
                                   as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
    static let addCloseFrom = function("posix_spawn_file_actions_addclosefrom_np",
                                       as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)

    private static func function<F>(_ name: String, as type: F.Type) -> F {
        guard let symbol = dlsym(nil, name) else { fatalError("this glibc lacks \(name); the tests need glibc 2.34 or later") }
        return unsafeBitCast(symbol, to: type)
    }
}

/// A child started by `Spawn`, reaped by a thread of its own as soon as it ends.
public final class SpawnedProcess: @unchecked Sendable {
    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    public let pid: pid_t
    private let condition = NSCondition()
    private var ended: Termination?

    init(pid: pid_t) {
        self.pid = pid
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            let termination: Termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
            condition.withLock {
                ended = termination
                condition.broadcast()
            }
        }
    }

    /// How it ended; nil while it runs.
    public var termination: Termination? { condition.withLock { ended } }

    public var isRunning: Bool { termination == nil }

    /// Sends `number` unless it has ended (its pid is then not its any more).
    public func signal(_ number: Int32) {
        condition.withLock { if ended == nil { kill(pid, number) } }
    }

    /// Waits (blocking this thread) until it ends or `timeout` passes; its termination, or nil.
    @discardableResult
    public func wait(timeout: Duration) -> Termination? {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        return condition.withLock {
            while ended == nil, condition.wait(until: deadline) {}
            return ended
        }
    }

    /// The same without holding a thread of Swift's concurrency pool: it asks every 20 ms.
    public func ended(within timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while termination == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return termination
    }

    /// SIGTERM, then SIGKILL if it has not ended `grace` later; waits for its end.
    public func stop(grace: Duration = .seconds(10)) {
        signal(SIGTERM)
        if wait(timeout: grace) == nil {
            signal(SIGKILL)
            wait(timeout: .seconds(30))
        }
    }
}
