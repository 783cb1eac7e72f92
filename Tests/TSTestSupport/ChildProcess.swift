import Foundation

/// Runs an executable to its end and collects what it wrote. Standard output and standard error
/// are read at the same time, each on a thread of its own, and standard input is written on a
/// third, so a child that fills one pipe while the test waits on the other cannot deadlock.
public enum ChildProcess {
    /// How the child ended and what it wrote.
    public struct Output: Sendable {
        /// The exit status, or the signal number when `signal` is set.
        public var status: Int32
        /// The signal that ended the child, if one did.
        public var signal: Int32?
        public var stdout: String
        public var stderr: String
        /// The test's `interruption` was sent (the child had not ended by itself before it).
        public var wasInterrupted: Bool
        /// The child still ran at `timeout` and was killed.
        public var timedOut: Bool

        /// Ended by itself with this exit status.
        public func exited(_ expected: Int32) -> Bool { signal == nil && status == expected }

        public var summary: String {
            let end = signal.map { "signal \($0)" } ?? "exit status \(status)"
            return "\(end)\(timedOut ? " (killed at its timeout)" : "")\nstdout:\n\(stdout)\nstderr:\n\(stderr)"
        }
    }

    /// A signal sent to the child while it runs, to end a command that runs until it is stopped
    /// (Ctrl-C is SIGINT).
    public struct Interruption: Sendable {
        public enum Moment: Sendable {
            /// As soon as standard output or standard error holds this text.
            case outputContains(String)
            /// After this long.
            case after(Duration)
            /// As soon as this holds (asked every 20 ms).
            case condition(@Sendable () -> Bool)
        }
        public var signal: Int32
        public var moment: Moment

        public init(signal: Int32 = SIGINT, when moment: Moment) {
            self.signal = signal
            self.moment = moment
        }
    }

    /// Runs `executable` and waits for it (blocking the calling thread).
    ///
    /// - Parameters:
    ///   - stdin: written to the child's standard input, which is then closed; nil gives it /dev/null.
    ///   - environment: the child's whole environment; nil inherits the test's.
    ///   - currentDirectory: where it runs; nil is the test's own.
    ///   - interruption: a signal to send while it runs.
    ///   - timeout: a child still running after this long is killed with SIGKILL and reported
    ///     with `timedOut` and its output so far.
    public static func run(_ executable: URL, arguments: [String] = [], stdin: Data? = nil,
                           environment: [String: String]? = nil, currentDirectory: URL? = nil,
                           interruption: Interruption? = nil,
                           timeout: Duration = .seconds(120)) throws -> Output {
        // Spawned, not run by Foundation's `Process`: the child holds only its three streams (`Spawn`).
        let stdoutPipe = try Spawn.pipe(), stderrPipe = try Spawn.pipe()
        let stdinPipe = try stdin.map { _ in try Spawn.pipe() }
        let process: SpawnedProcess
        do {
            process = try Spawn.start(executable.path, arguments: arguments, environment: environment, currentDirectory: currentDirectory?.path,
                                      stdin: stdinPipe.map { .descriptor($0.read) } ?? .null,
                                      stdout: .descriptor(stdoutPipe.write), stderr: .descriptor(stderrPipe.write))
        } catch {
            for end in [stdoutPipe.read, stdoutPipe.write, stderrPipe.read, stderrPipe.write] { close(end) }
            if let stdinPipe { close(stdinPipe.read); close(stdinPipe.write) }
            throw error
        }
        close(stdoutPipe.write)
        close(stderrPipe.write)
        let stdoutReader = PipeReader(stdoutPipe.read)
        let stderrReader = PipeReader(stderrPipe.read)
        stdoutReader.start()
        stderrReader.start()
        if let stdin, let stdinPipe {
            close(stdinPipe.read)
            // A child that never reads its input must not block us either.
            Thread.detachNewThread {
                stdin.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(stdinPipe.write, bytes.baseAddress! + offset, bytes.count - offset)
                        if written > 0 { offset += written } else if written < 0, errno == EINTR { continue } else { break }
                    }
                }
                close(stdinPipe.write)
            }
        }

        let start = ContinuousClock.now
        var hasExited = false
        var wasInterrupted = false
        var timedOut = false
        if let interruption {
            // Poll only while an interruption is pending: the moment may be a text in the output.
            while !wasInterrupted, !hasExited, ContinuousClock.now - start < timeout {
                if process.wait(timeout: .milliseconds(20)) != nil {
                    hasExited = true
                    break
                }
                let isDue: Bool = switch interruption.moment {
                case let .outputContains(text): stdoutReader.text.contains(text) || stderrReader.text.contains(text)
                case let .after(delay): ContinuousClock.now - start >= delay
                case let .condition(holds): holds()
                }
                if isDue {
                    process.signal(interruption.signal)
                    wasInterrupted = true
                }
            }
        }
        var termination = process.termination
        if termination == nil {
            termination = process.wait(timeout: timeout - (ContinuousClock.now - start))
            if termination == nil {
                timedOut = true
                process.signal(SIGKILL)
                termination = process.wait(timeout: .seconds(60))
            }
        }
        // The pipes end when every process holding them has gone; a grandchild the child left
        // behind may keep them open, so do not wait for ever.
        stdoutReader.waitForEnd(timeout: .seconds(10))
        stderrReader.waitForEnd(timeout: .seconds(10))
        let (status, signal): (Int32, Int32?) = switch termination {
        case let .exited(code): (code, nil)
        case let .signalled(number): (number, number)
        case nil: (SIGKILL, SIGKILL)
        }
        return Output(status: status, signal: signal, stdout: stdoutReader.text, stderr: stderrReader.text,
                      wasInterrupted: wasInterrupted, timedOut: timedOut)
    }

    /// The same, without holding a thread of Swift's concurrency pool while the child runs.
    public static func run(_ executable: URL, arguments: [String] = [], stdin: Data? = nil,
                           environment: [String: String]? = nil, currentDirectory: URL? = nil,
                           interruption: Interruption? = nil,
                           timeout: Duration = .seconds(120)) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try run(executable, arguments: arguments, stdin: stdin, environment: environment, currentDirectory: currentDirectory,
                            interruption: interruption, timeout: timeout) as Output
                })
            }
        }
    }
}

/// Reads one pipe to its end on a thread of its own, then closes it.
private final class PipeReader: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = NSLock()
    private var data = Data()
    private let ended = DispatchSemaphore(value: 0)

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    func start() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    lock.withLock { data.append(contentsOf: buffer[0..<count]) }
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            ended.signal()
        }
    }

    /// What was read so far, as UTF-8.
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    func waitForEnd(timeout: Duration) {
        _ = ended.wait(timeout: .now() + timeout.dispatchInterval)
    }
}

extension Duration {
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}
