import Foundation
import Testing

/// Exit tests that hold no thread of the cooperative pool and end in bounded time.
///
/// Swift Testing's parent side of an exit test reads the child's standard error and its back
/// channel with blocking `read`s, each in a child task of the task that awaits the exit test.
/// On the global executor each holds a pool thread for the child's whole life, and a two-core
/// machine's pool has two: every other test of the process stands still (its deadlines too)
/// until the child ends, and forever when it does not. `run` gives those tasks threads of their
/// own. The child stops itself after `childLimit` (`InProcess.child`); one that cannot is
/// killed by the parent `grace` later and the test fails saying so.
enum BoundedExitTest {
    /// How long an exit test's child may run before it stops itself and says where it was.
    static let childLimit: Duration = .seconds(100)
    /// How much longer the parent waits before it kills a child that did not stop itself.
    static let grace: Duration = .seconds(30)

    /// Runs `body` (which awaits one exit test) with every task it starts on a thread of its
    /// own; kills the exit-test child it started if that is still there `childLimit + grace` on
    /// (an exit-test child that another suite started meanwhile would be killed too: the exit
    /// tests of this target run one at a time).
    static func run(_ body: () async -> Void) async {
        let executor = ThreadPerJobExecutor()
        let before = Set(ExitTestChildren.running())
        let backstop = Task(executorPreference: executor) {
            do { try await Task.sleep(for: childLimit + grace) } catch { return }
            let killed = ExitTestChildren.kill(except: before)
            Issue.record("the exit test's child ran past \(childLimit + grace) without stopping itself: killed \(killed.isEmpty ? "nothing (none found)" : "pid \(killed.map(String.init).joined(separator: ", "))")")
        }
        await withTaskExecutorPreference(executor) { await body() }
        backstop.cancel()
    }
}

/// Runs each job on a new thread: a job that blocks (a `read` until the child closes its end)
/// holds only its own thread, never one of the cooperative pool.
final class ThreadPerJobExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job), executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}

/// This process's exit-test children and its own children, from /proc.
enum ExitTestChildren {
    /// This process's children that run an exit test (Swift Testing names the test in their environment).
    static func running() -> [pid_t] {
        children(of: getpid()).filter { pid in
            guard let environment = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")) else { return false }
            return environment.split(separator: 0).contains { $0.starts(with: Array("SWT_EXIT_TEST_ID=".utf8)) }
        }
    }

    /// Kills (SIGKILL) this process's exit-test children but `except`; returns their pids.
    static func kill(except: Set<pid_t>) -> [pid_t] {
        let found = running().filter { !except.contains($0) }
        for pid in found { Foundation.kill(pid, SIGKILL) }
        return found
    }

    /// The processes whose parent is `parent`.
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            // /proc/PID/stat: "PID (COMMAND) STATE PPID …"; COMMAND may hold spaces and parentheses.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent
        }
    }
}
