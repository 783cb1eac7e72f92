import Foundation

/// A child process of the report: run to the end within a timeout, or started and left running.
enum Child {
    static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    struct Answer {
        var status: Int32
        var data: Data
        var stderr: String
        var stdout: String { String(decoding: data, as: UTF8.self) }
    }

    /// Runs `arguments` (the first found on PATH when it has no slash); nil when it cannot start or outlives `timeout`.
    static func run(_ arguments: [String], timeout: TimeInterval = 10) -> Answer? {
        guard let started = start(arguments) else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while started.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if started.process.isRunning {
            started.process.terminate()
            started.process.waitUntilExit()
            return nil
        }
        return Answer(status: started.process.terminationStatus, data: started.stdout(), stderr: started.stderr())
    }

    final class Started {
        let process: Process
        private let out: Collector
        private let err: Collector

        init(process: Process, out: Collector, err: Collector) {
            self.process = process
            self.out = out
            self.err = err
        }

        func stdout() -> Data { out.finish() }
        func stderr() -> String { String(decoding: err.finish(), as: UTF8.self) }
    }

    /// Reads a pipe on its own thread, so a chatty child never blocks on a full pipe.
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ pipe: Pipe) {
            let reading = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = reading.availableData
                    if chunk.isEmpty { break }
                    lock.lock(); data.append(chunk); lock.unlock()
                }
                done.signal()
            }
        }

        func finish() -> Data {
            done.wait()
            done.signal()
            lock.lock(); defer { lock.unlock() }
            return data
        }
    }

    static func start(_ arguments: [String]) -> Started? {
        guard let first = arguments.first else { return nil }
        let process = Process()
        if first.contains("/") {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(arguments.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        try? out.fileHandleForWriting.close()
        try? err.fileHandleForWriting.close()
        return Started(process: process, out: Collector(out), err: Collector(err))
    }
}
