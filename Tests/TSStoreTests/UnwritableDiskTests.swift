import Foundation
import TSFiles
import TSModels
import TSStore
import TSTestSupport
import Testing

/// The store and `PrivateFile` on a real file system that is full or read-only (`ScratchDisk`,
/// reached from this process through /proc/HOLDER/root): a refused write is `StorageUnwritable`
/// with its condition and category, and nothing of the refused transaction is stored.
@Suite("writes refused by a full or read-only disk", .enabled(if: ScratchDisk.unavailableReason == nil, "\(ScratchDisk.unavailableReason ?? "")"))
struct UnwritableDiskTests {
    static func items(_ count: Int, from start: Int64) -> [SleepItem] {
        (0..<count).map { SleepItem(stage: .light, start: start + Int64($0) * 60, duration: 60) }
    }

    @Test("a full disk: SQLITE_FULL is StorageFull naming the directory, the transaction is rolled back; freed, the same write stores everything once")
    func fullDatabase() async throws {
        let disk = try ScratchDisk(.tmpfs(kibibytes: 4 * 1024))
        defer { disk.remove() }
        let directory = disk.hostPath(disk.mountPoint)
        let store = try GatewayStore(path: directory + "/tsgateway.sqlite")
        try await store.storeSleepRecords(Self.items(10, from: 1_000_000), watch: "w", cursor: SyncCursor(rangeStart: 1_000_000, upTo: 1_000_600))
        try disk.fill()
        let many = Self.items(20_000, from: 2_000_000)
        let refused = await #expect(throws: StorageUnwritable.self) {
            try await store.storeSleepRecords(many, watch: "w", cursor: SyncCursor(rangeStart: 1_000_000, upTo: 3_300_000))
        }
        #expect(refused?.condition == .full && refused?.category == .storageFull && ExitStatus.of(refused!) == .storageFull)
        #expect(refused?.description == "the disk holding \(directory) is full; free space and try again")
        #expect(try await store.sleepRecords(watch: "w").count == 10)
        #expect(try await store.syncCursor(watch: "w")?.upTo == 1_000_600)
        try disk.free()
        #expect(try await store.storeSleepRecords(many, watch: "w", cursor: SyncCursor(rangeStart: 1_000_000, upTo: 3_300_000)) == many.count)
        #expect(try await store.sleepRecords(watch: "w").count == 10 + many.count)
    }

    @Test("PrivateFile on a full disk is StorageFull (ENOSPC), on a read-only one StorageReadOnly (EROFS); nothing is left behind")
    func privateFiles() throws {
        let disk = try ScratchDisk(.tmpfs(kibibytes: 1024))
        defer { disk.remove() }
        let directory = disk.hostPath(disk.mountPoint)
        try disk.fill()
        let full = #expect(throws: FileWriteError.self) { try PrivateFile.write(Data(count: 256 * 1024), to: directory + "/export.json") }
        #expect(full?.category == .storageFull && full?.storageCondition == .full, "\(String(describing: full))")
        #expect(full?.description.contains("the disk holding \(directory) is full") == true, "\(String(describing: full))")
        try disk.free()
        try disk.remountReadOnly()
        let readOnly = #expect(throws: FileWriteError.self) { try PrivateFile.write("{}", to: directory + "/export.json") }
        #expect(readOnly?.category == .storageReadOnly && readOnly?.description.contains("is read-only") == true, "\(String(describing: readOnly))")
        try disk.remountWritable()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != ".filler" }.isEmpty)
    }
}
