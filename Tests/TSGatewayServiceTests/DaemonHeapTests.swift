import Foundation
@testable import TSGatewayService
import Testing

@Suite("the daemon's heap", .serialized)
struct DaemonHeapTests {
    /// This process's private resident memory (RssAnon), KiB.
    static func residentAnonymousKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: "/proc/self/status"]) }
        return kib
    }

    /// 48 MiB in 1 KiB blocks, then every block freed but one in 64: the pages between the kept
    /// blocks are free, yet the allocator keeps them, resident, for reuse — what a daemon's arenas
    /// do over hours. Returns the kept blocks.
    static func fragmentedHeap() -> [UnsafeMutableRawPointer] {
        let count = 48 * 1024
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(count)
        for _ in 0..<count {
            guard let block = malloc(1024) else { break }
            memset(block, 1, 1024)
            blocks.append(block)
        }
        var kept: [UnsafeMutableRawPointer] = []
        for (index, block) in blocks.enumerated() {
            if index % 64 == 63 { kept.append(block) } else { free(block) }
        }
        return kept
    }

    @Test("a trim hands the free pages the allocator keeps back to the system")
    func trimReturnsFreePages() throws {
        let kept = Self.fragmentedHeap()
        defer { kept.forEach { free($0) } }
        let usage = DaemonHeap.usage()
        #expect(usage.held - usage.allocated >= 40 << 20, "the freed blocks are still the allocator's")
        let before = try Self.residentAnonymousKiB()
        #expect(DaemonHeap.trim(), "malloc_trim returned nothing")
        let after = try Self.residentAnonymousKiB()
        // About 47 MiB come back; other tests running meanwhile may take some of the freed space.
        #expect(before - after >= 24 * 1024, "RssAnon \(before) KiB before the trim, \(after) KiB after")
    }

    @Test("the daemon's trim loop trims until it is cancelled")
    func trimLoop() async throws {
        let kept = Self.fragmentedHeap()
        defer { kept.forEach { free($0) } }
        let before = try Self.residentAnonymousKiB()
        let loop = Task { await DaemonHeap.trimPeriodically(every: .milliseconds(20)) }
        var after = before
        for _ in 0..<200 where before - after < 24 * 1024 {
            try await Task.sleep(for: .milliseconds(20))
            after = try Self.residentAnonymousKiB()
        }
        loop.cancel()
        await loop.value
        #expect(before - after >= 24 * 1024, "RssAnon \(before) KiB before the loop, \(after) KiB after")
    }
}
