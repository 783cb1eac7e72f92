import Foundation
import TSModels

/// Files of personal data (sleep exports and reports, captures, ground truths, the simulated
/// watch's memory, the database): the one writer every layer uses. A file is created readable by
/// its owner only (0600) unless a mode is asked for, whatever the umask; a whole file is replaced
/// atomically (written to a temporary file beside it, flushed, renamed over it), so a reader never
/// sees half of one; a failure says what to check and leaves nothing behind.
public enum PrivateFile {
    /// Replaces `path` with `data`, atomically, with `mode`.
    public static func write(_ data: Data, to path: String, mode: Int = 0o600) throws(FileWriteError) {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileWriteError(path: path, errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
        } catch {
            throw FileWriteError(path: path, writing: error)
        }
        guard fchmod(descriptor, mode_t(mode)) == 0, fsync(descriptor) == 0 else { throw FileWriteError(path: path, errno: errno) }
        try? handle.close()
        guard rename(temporary, path) == 0 else { throw FileWriteError(path: path, errno: errno) }
        renamed = true
    }

    /// Replaces `path` with `text` in UTF-8, atomically, with `mode`.
    public static func write(_ text: String, to path: String, mode: Int = 0o600) throws(FileWriteError) {
        try write(Data(text.utf8), to: path, mode: mode)
    }

    /// Creates (or empties) `path`, 0600, for a stream of writes (a capture, a journal).
    public static func appending(to path: String) throws(FileWriteError) -> PrivateFileAppender {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileWriteError(path: path, errno: errno) }
        // An existing file keeps its mode through O_CREAT: make it the owner's alone.
        guard fchmod(descriptor, 0o600) == 0 else {
            let code = errno
            close(descriptor)
            throw FileWriteError(path: path, errno: code)
        }
        return PrivateFileAppender(path: path, handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
    }

    /// Makes an empty file at `path`, 0600, unless one is there, exclusively (O_EXCL): of two
    /// processes starting at once, one creates it and neither empties what the other began.
    /// True when this call created it.
    @discardableResult
    public static func createIfAbsent(_ path: String) throws(FileWriteError) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
            return true
        }
        guard errno == EEXIST else { throw FileWriteError(path: path, errno: errno) }
        return false
    }

    /// Creates `directory` when it is missing: 0700, or 0750 / 0755 when its files are for the group / everyone (`fileMode`).
    public static func prepareDirectory(_ directory: String, mode fileMode: Int) throws(FileWriteError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw FileWriteError(path: directory, reason: "it is a file, not a directory", category: .invalidInput) }
            return
        }
        let mode = fileMode & 0o004 != 0 ? 0o755 : fileMode & 0o040 != 0 ? 0o750 : 0o700
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw FileWriteError(path: directory, reason: "cannot create it (\((error as NSError).localizedDescription))", category: .storage)
        }
        guard chmod(directory, mode_t(mode)) == 0 else { throw FileWriteError(path: directory, errno: errno) }
    }
}

/// A private file written as a stream, in order; `close` when done.
public final class PrivateFileAppender: @unchecked Sendable {
    public let path: String
    private let handle: FileHandle

    init(path: String, handle: FileHandle) {
        self.path = path
        self.handle = handle
    }

    public func append(_ data: Data) throws(FileWriteError) {
        do { try handle.write(contentsOf: data) } catch {
            throw FileWriteError(path: path, writing: error)
        }
    }

    public func append(_ bytes: [UInt8]) throws(FileWriteError) { try append(Data(bytes)) }

    public func close() { try? handle.close() }
}

/// A file that could not be written: which, why, and what to check.
public struct FileWriteError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var category: ErrorCategory

    public init(path: String, reason: String, category: ErrorCategory) {
        self.path = path
        self.reason = reason
        self.category = category
    }

    /// From the C library's `errno`: a full or read-only disk is `.storageFull` / `.storageReadOnly`
    /// (`StorageUnwritable` says what to do), a permission `.permission`, anything else `.storage`.
    public init(path: String, errno code: Int32) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if let condition = StorageCondition(errno: code) {
            self.init(path: path, unwritable: StorageUnwritable(condition, directory: directory))
            return
        }
        self.init(path: path, reason: "\(String(cString: strerror(code))); check that \(directory) exists and that this user may write there",
                  category: code == EACCES || code == EPERM ? .permission : .storage)
    }

    /// The disk refused the write: full or read-only.
    public init(path: String, unwritable: StorageUnwritable) {
        self.init(path: path, reason: unwritable.description, category: unwritable.category)
    }

    /// From an error of Foundation's file writing: a full or read-only disk named as such (its
    /// errno, or else what `statvfs` says of `path`'s directory now), anything else `.storage`.
    init(path: String, writing error: any Error) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let code = underlying?.domain == NSPOSIXErrorDomain ? Int32(underlying!.code) : (error as NSError).domain == NSPOSIXErrorDomain ? Int32((error as NSError).code) : 0
        if let condition = StorageCondition(errno: code) ?? StorageCondition.of(path: directory) {
            self.init(path: path, unwritable: StorageUnwritable(condition, directory: directory))
        } else {
            self.init(path: path, reason: (error as NSError).localizedDescription, category: .storage)
        }
    }

    /// The disk's condition when the write failed because the disk is full or read-only.
    public var storageCondition: StorageCondition? {
        switch category {
        case .storageFull: .full
        case .storageReadOnly: .readOnly
        default: nil
        }
    }

    public var description: String { "cannot write \(path): \(reason)" }
}
