import Foundation
import TSFiles
import TSModels
import TSStore
import TSTestSupport
import Testing

/// `PrivateFile` on a real file system that is full or read-only (`ScratchDisk`, reached from
/// this process through /proc/HOLDER/root; the store's own refusals are tested through the CLI
/// and `serve`, as SQLite resolves that link to the host's path).
@Suite("files refused by a full or read-only disk", .enabled(if: ScratchDisk.unavailableReason == nil, "\(ScratchDisk.unavailableReason ?? "")"))
struct UnwritableDiskTests {
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
