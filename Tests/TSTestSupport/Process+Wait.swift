import Foundation

extension Process {
    /// Waits for the process to end by polling `isRunning`, not with `waitUntilExit`, which runs
    /// a run loop and can stall on a concurrency thread (swift-corelibs-foundation): in CI's full
    /// suite every test finishing together after some 55 s, and the tests timed against it
    /// failing. False when it had not ended after `timeout`.
    @discardableResult
    public func waitPolling(timeout: Duration = .seconds(120)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }
}
