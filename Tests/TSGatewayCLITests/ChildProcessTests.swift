import Foundation
import Testing
import TSTestSupport

@Suite struct ChildProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    /// A child that fills its stderr pipe before writing any stdout: a runner that reads stdout to
    /// its end first never returns (the child blocks on the full stderr pipe).
    @Test func aChildWritingMegabytesToStderrBeforeStdoutFinishes() throws {
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", "head -c 2000000 /dev/zero >&2; echo done"], timeout: .seconds(60))
        #expect(!result.timedOut)
        #expect(result.exited(0))
        #expect(result.stdout == "done\n")
        #expect(result.stderr.utf8.count == 2_000_000)
    }

    @Test func standardInputLargerThanAPipeReachesAChildThatWritesFirst() throws {
        let input = Data(repeating: UInt8(ascii: "x"), count: 1_500_000)
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", "head -c 1000000 /dev/zero >&2; wc -c"], stdin: input, timeout: .seconds(60))
        #expect(result.exited(0))
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1500000")
    }

    @Test func aChildPastItsTimeoutIsKilledAndSaysSo() throws {
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", "echo started; exec sleep 30"], timeout: .milliseconds(500))
        #expect(result.timedOut)
        #expect(result.signal == SIGKILL)
        #expect(result.stdout == "started\n")
    }

    @Test func anInterruptionIsSentOnceTheOutputHoldsItsText() throws {
        let script = #"trap 'echo interrupted; exit 3' INT; echo ready; while :; do sleep 0.1; done"#
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", script],
                                          interruption: .init(signal: SIGINT, when: .outputContains("ready")), timeout: .seconds(30))
        #expect(result.wasInterrupted)
        #expect(!result.timedOut)
        #expect(result.exited(3), "\(result.summary)")
        #expect(result.stdout == "ready\ninterrupted\n")
    }

    @Test func environmentAndWorkingDirectoryAreTheGivenOnes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", "echo \"$GREETING\"; pwd"], environment: ["GREETING": "hello"],
                                          currentDirectory: directory)
        #expect(result.stdout == "hello\n\(directory.resolvingSymlinksInPath().path)\n")
    }
}
