import Foundation

/// Why the disk holding the gateway's data takes no writes: it is full (ENOSPC, SQLITE_FULL), or
/// the kernel made it read-only (EROFS; an SD card is remounted so after an error).
public enum StorageCondition: String, Sendable, Hashable, Codable, CaseIterable {
    case full
    case readOnly = "read-only"

    /// The error category (and so the exit status and D-Bus error name) of a write it refused.
    public var category: ErrorCategory {
        switch self {
        case .full: .storageFull
        case .readOnly: .storageReadOnly
        }
    }

    /// What the person does about it.
    public var remedy: String {
        switch self {
        case .full: "free space"
        case .readOnly: "repair and remount it read-write (the kernel log, `dmesg`, says why it became read-only)"
        }
    }

    /// The condition a failed write's `errno` names; nil for any other failure.
    public init?(errno code: Int32) {
        switch code {
        case ENOSPC, EDQUOT: self = .full
        case EROFS: self = .readOnly
        default: return nil
        }
    }

    /// The file system holding the directory `path` now: read-only, full (less than `reserve`
    /// bytes left to this user), or nil when it takes writes (or cannot be asked). `statvfs`
    /// first; then a file is made there and removed, because a file system the kernel stopped
    /// after an error (ext4's `emergency_ro`) refuses writes with EROFS while `statvfs` still says
    /// read-write.
    public static func of(path: String, reserve: UInt64 = 64 * 1024) -> StorageCondition? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        if info.f_flag & UInt(ST_RDONLY) != 0 { return .readOnly }
        if UInt64(info.f_bavail) * UInt64(info.f_frsize) < reserve { return .full }
        let probe = path + "/.tsgateway-write-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return StorageCondition(errno: errno) }
        close(descriptor)
        unlink(probe)
        return nil
    }
}

/// A write the disk refused (`condition`), in words a person can act on: which disk (by the
/// directory of the gateway's data on it), what it means for what was being done
/// (`consequence`, e.g. "nothing was acknowledged to the watch"), and what to do.
public struct StorageUnwritable: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var condition: StorageCondition
    /// The directory whose disk refused the write (the database's, a file's).
    public var directory: String
    /// What was not done because of it; nil: the write alone failed.
    public var consequence: String?
    /// What to do once the disk takes writes again (after `condition.remedy`); nil: try again.
    public var retry: String?

    public init(_ condition: StorageCondition, directory: String, consequence: String? = nil, retry: String? = nil) {
        self.condition = condition
        self.directory = directory
        self.consequence = consequence
        self.retry = retry
    }

    public var category: ErrorCategory { condition.category }

    /// "the disk holding /var/lib/tsgateway is full: nothing was acknowledged to the watch; free space and sync again"
    public var description: String {
        let state = switch condition {
        case .full: "full"
        case .readOnly: "read-only"
        }
        var text = "the disk holding \(directory) is \(state)"
        if let consequence { text += ": \(consequence)" }
        text += "; \(condition.remedy) and \(retry ?? "try again")"
        return text
    }

    /// The same refusal, saying what it meant for `consequence` and what to do again (`retry`).
    public func with(consequence: String, retry: String) -> StorageUnwritable {
        StorageUnwritable(condition, directory: directory, consequence: consequence, retry: retry)
    }
}
