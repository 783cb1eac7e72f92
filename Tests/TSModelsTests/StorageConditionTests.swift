import Foundation
import TSModels
import Testing

@Suite("a disk that takes no writes")
struct StorageConditionTests {
    @Test("ENOSPC and EDQUOT are a full disk, EROFS a read-only one, anything else neither")
    func fromErrno() {
        #expect(StorageCondition(errno: ENOSPC) == .full)
        #expect(StorageCondition(errno: EDQUOT) == .full)
        #expect(StorageCondition(errno: EROFS) == .readOnly)
        #expect(StorageCondition(errno: EACCES) == nil)
        #expect(StorageCondition(errno: EIO) == nil)
    }

    @Test("the sync's message names the disk, says nothing was acknowledged and what to do; each condition has its own category and exit status")
    func message() {
        let refused = StorageUnwritable(.full, directory: "/var/lib/tsgateway").with(consequence: "nothing was acknowledged to the watch", retry: "sync again")
        #expect(refused.description == "the disk holding /var/lib/tsgateway is full: nothing was acknowledged to the watch; free space and sync again")
        #expect(ExitStatus.of(refused) == .storageFull && ExitStatus.storageFull.rawValue == 82)
        let readOnly = StorageUnwritable(.readOnly, directory: "/var/lib/tsgateway")
        #expect(readOnly.description.hasPrefix("the disk holding /var/lib/tsgateway is read-only; repair and remount it read-write"))
        #expect(ExitStatus.of(readOnly) == .storageReadOnly && ExitStatus.storageReadOnly.rawValue == 83)
        #expect(ErrorCategory.storageFull.rawValue == "StorageFull" && ErrorCategory.storageReadOnly.rawValue == "StorageReadOnly")
    }

    @Test("statvfs: the test's own temporary directory takes writes; a directory that is not there cannot be asked (nil)")
    func statvfsCondition() {
        #expect(StorageCondition.of(path: FileManager.default.temporaryDirectory.path) == nil)
        #expect(StorageCondition.of(path: "/nonexistent-\(UUID())") == nil)
    }
}
