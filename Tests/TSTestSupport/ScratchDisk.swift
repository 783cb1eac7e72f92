import Foundation

/// A small real file system of a test's own — tmpfs, or ext4 on a loop device — mounted in a
/// private mount namespace (`unshare --mount --propagation private`), so the host's mounts never
/// see it and it goes away with the namespace. A holder process keeps the namespace alive;
/// commands run inside it through `nsenter`, and the test process reads its files through
/// `/proc/HOLDER/root` (`hostPath`). Needs root (CI runs as root): `unavailableReason` says
/// why not otherwise, for `.enabled(if:)`.
public final class ScratchDisk: @unchecked Sendable {
    public enum Kind: Sendable {
        /// tmpfs of this many KiB: fills for real; `mount -o remount,ro` makes it read-only
        /// while no process has a file on it open for writing.
        case tmpfs(kibibytes: Int)
        /// ext4 of this many MiB on a loop device, `errors=remount-ro`: `failLikeAnSDCard()` makes
        /// the kernel remount it read-only under open files, as after a card's I/O error.
        case ext4(mebibytes: Int)
    }

    /// Where it is mounted, as processes in its namespace see it (a fresh directory under /tmp).
    public let mountPoint: String
    let holder: SpawnedProcess
    let image: String?

    /// Why these tests cannot run here; nil when they can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "needs root (a private mount namespace with tmpfs and loop mounts); CI runs as root" }
        for tool in ["/usr/bin/unshare", "/usr/bin/nsenter"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "needs \(tool) (util-linux)"
        }
        return nil
    }()

    public init(_ kind: Kind) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-disk-\(UUID().uuidString.prefix(8))")
        mountPoint = base.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount: String
        switch kind {
        case let .tmpfs(kibibytes):
            image = nil
            mount = "mount -t tmpfs -o size=\(kibibytes)k,mode=0755 tsgateway-test \(mountPoint)"
        case let .ext4(mebibytes):
            let path = base.appendingPathComponent("disk.img").path
            image = path
            try Self.shell("truncate -s \(mebibytes)M \(path) && mkfs.ext4 -q -F \(path)")
            mount = "mount -o loop,errors=remount-ro \(path) \(mountPoint)"
        }
        // The holder mounts, says so, and sleeps until it is killed; the namespace ends with it.
        let output = try Spawn.pipe()
        defer { close(output.read) }
        let process: SpawnedProcess
        do {
            process = try Spawn.start("/usr/bin/unshare", arguments: ["--mount", "--propagation", "private", "/bin/sh", "-c", "\(mount) && echo mounted && exec sleep 3600"],
                                      stdin: .null, stdout: .descriptor(output.write), stderr: .descriptor(output.write))
        } catch {
            close(output.write)
            throw error
        }
        close(output.write)
        holder = process
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count = 0
        repeat { count = buffer.withUnsafeMutableBytes { read(output.read, $0.baseAddress, $0.count) } } while count < 0 && errno == EINTR
        let line = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        guard line.contains("mounted") else {
            process.stop()
            throw ScratchDiskError("could not mount the test's file system: \(line)")
        }
    }

    /// `path` (inside the mount point or not) as the test process reaches it.
    public func hostPath(_ path: String) -> String { "/proc/\(holder.pid)/root\(path)" }

    /// The command line that runs `arguments` in the disk's namespace.
    public func inside(_ arguments: [String]) -> (executable: URL, arguments: [String]) {
        (URL(fileURLWithPath: "/usr/bin/nsenter"), ["--target", "\(holder.pid)", "--mount", "--"] + arguments)
    }

    /// Runs a shell command in the disk's namespace; throws with its output when it fails.
    @discardableResult
    public func sh(_ command: String) throws -> String {
        let (executable, arguments) = inside(["/bin/sh", "-c", command])
        return try Self.run(executable, arguments)
    }

    /// The rows of `sql` on the SQLite database at `database` (a path in the namespace), each
    /// value as text; read inside the namespace by Python's sqlite3. Not through `hostPath`:
    /// SQLite resolves the /proc/PID/root link and would open the host's file of that name.
    public func query(database: String, _ sql: String) throws -> [[String]] {
        let script = "import json, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(json.dumps([[str(v) for v in row] for row in c.execute(sys.argv[2])]))"
        let (executable, arguments) = inside(["python3", "-c", script, database, sql])
        let text = try Self.run(executable, arguments)
        return try JSONDecoder().decode([[String]].self, from: Data(text.utf8))
    }

    /// Fills it up but for `leaving` bytes: a file of zeros written until ENOSPC, then shortened.
    public func fill(leaving bytes: Int = 0) throws {
        try sh("dd if=/dev/zero of=\(mountPoint)/.filler bs=64k 2>/dev/null; sync; truncate -s -\(bytes) \(mountPoint)/.filler")
    }

    /// Frees what `fill` took.
    public func free() throws { try sh("rm -f \(mountPoint)/.filler") }

    /// Bytes free now (`df`).
    public func available() throws -> Int {
        Int(try sh("df --output=avail -B1 \(mountPoint) | tail -1").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// `mount -o remount,ro`: refused by the kernel while a file on it is open for writing.
    public func remountReadOnly() throws { try sh("mount -o remount,ro \(mountPoint)") }

    public func remountWritable() throws { try sh("mount -o remount,rw \(mountPoint)") }

    /// ext4 only: the kernel records a file-system error (`trigger_fs_error`, as after a card's
    /// I/O error) and, with `errors=remount-ro`, remounts it read-only under the open files.
    public func failLikeAnSDCard() throws {
        try sh("echo tsgateway-test > /sys/fs/ext4/$(basename $(findmnt -n -o SOURCE \(mountPoint)))/trigger_fs_error")
    }

    /// ext4 only, with nothing on it open: what a person does after such an error — unmount,
    /// `e2fsck -fy`, mount again.
    public func repair() throws {
        guard let image else { throw ScratchDiskError("only an ext4 disk is repaired") }
        try sh("umount \(mountPoint) && { e2fsck -fy \(image) >/dev/null 2>&1; [ $? -le 1 ]; } && mount -o loop,errors=remount-ro \(image) \(mountPoint)")
    }

    /// Ends the namespace (and with it the mount and its loop device) and removes the files.
    public func remove() {
        if holder.isRunning {
            holder.stop()
        }
        try? FileManager.default.removeItem(atPath: (mountPoint as NSString).deletingLastPathComponent)
    }

    deinit { remove() }

    static func shell(_ command: String) throws {
        try run(URL(fileURLWithPath: "/bin/sh"), ["-c", command])
    }

    @discardableResult
    static func run(_ executable: URL, _ arguments: [String]) throws -> String {
        let output = try ChildProcess.run(executable, arguments: arguments, timeout: .seconds(60))
        guard output.exited(0) else { throw ScratchDiskError("\(arguments.joined(separator: " ")) failed: \(output.summary)") }
        return output.stdout
    }
}

public struct ScratchDiskError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
