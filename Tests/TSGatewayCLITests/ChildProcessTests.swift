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

    /// The stalled pair of the flake ledger: a child that holds a pipe end of another test keeps
    /// that test waiting for an end of file until the child dies.
    @Test("a spawned child holds no descriptor of the test process but its three streams, not even an inheritable one")
    func aSpawnedChildHoldsOnlyItsStreams() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)  // not close-on-exec: what another thread's pipe may be
        defer { close(ends[0]) }
        let child = try Spawn.start("/bin/sleep", arguments: ["30"], stdin: .null, stdout: .null, stderr: .null)
        defer { child.signal(SIGKILL); child.wait(timeout: .seconds(10)) }
        close(ends[1])
        var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 5_000)
        #expect(ready == 1 && poller.revents & Int16(POLLHUP) != 0, "the pipe's write end is still open in the child")
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd").compactMap(Int32.init).sorted()
        #expect(descriptors == [0, 1, 2])
    }

    @Test("a spawned child starts with no signal ignored or blocked, whatever the test process's thread had")
    func aSpawnedChildStartsWithSignalsAtTheirDefaults() throws {
        // Changing this process's dispositions would reach the other tests' children; /proc says what the child got.
        let result = try ChildProcess.run(Self.shell, arguments: ["-c", "grep -E '^Sig(Ign|Blk):' /proc/self/status"], timeout: .seconds(30))
        #expect(result.exited(0), "\(result.summary)")
        // One bit a signal, signal n at bit n − 1; 32 and up are glibc's own and the real-time ones.
        let masks = Dictionary(uniqueKeysWithValues: result.stdout.split(separator: "\n").compactMap { line -> (String, UInt64)? in
            let parts = line.split(separator: ":")
            guard parts.count == 2, let bits = UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            return (String(parts[0]), bits & 0x7FFF_FFFF)
        })
        #expect(masks == ["SigBlk": 0, "SigIgn": 0], "\(result.stdout)")
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
