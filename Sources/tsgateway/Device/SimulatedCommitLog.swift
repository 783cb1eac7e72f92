import Foundation
import TSModels
import TSSimulatedHistory
import TSSimulator

/// TSGATEWAY_SIMULATOR_COMMIT_LOG=PATH: the simulated watch writes every sleep commit it accepts
/// to PATH as a line of JSON (`AcceptedSleepCommit`), with one write(2) each before it answers the
/// commit. scripts/e2e-powercut points it at a virtio-serial port, so the host holds the line
/// whatever becomes of the VM's disk when its power is cut.
final class SimulatedCommitLog: Sendable {
    private let descriptor: Int32
    private let path: String

    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SimulatedCommitLog? {
        guard let path = environment["TSGATEWAY_SIMULATOR_COMMIT_LOG"], !path.isEmpty else { return nil }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CLIFailure("TSGATEWAY_SIMULATOR_COMMIT_LOG=\(path) cannot be opened: \(String(cString: strerror(errno))); name a file or port you may write", status: .ioError)
        }
        return SimulatedCommitLog(descriptor: descriptor, path: path)
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Writes the commit's line; a failed write is said on standard error (the check then misses
    /// the line and fails: the log is the test's, not the user's).
    func append(_ commit: AcceptedSleepCommit) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard var line = try? encoder.encode(commit) else { return }
        line.append(UInt8(ascii: "\n"))
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written != line.count {
            FileHandle.standardError.write(Data("tsgateway: the commit log \(path) took \(written) of \(line.count) bytes\n".utf8))
        }
    }
}
