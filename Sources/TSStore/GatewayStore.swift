import Foundation
import GRDB
import GRDBSQLite
import TSFiles
import TSModels

/// The gateway's SQLite database (WAL, synchronous = FULL so a commit survives power loss).
/// The file and its WAL are created readable by the owner only: they hold health data.
public final class GatewayStore: Sendable {
    public let path: String
    let pool: DatabasePool

    /// `$XDG_DATA_HOME/tsgateway/tsgateway.sqlite`, or `~/.local/share/tsgateway/…`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
        return base + "/tsgateway/tsgateway.sqlite"
    }

    /// How long a write waits for another connection's write transaction (another tsgateway
    /// process on the same file, such as a cron `sleep sync`) before it gives up with
    /// `StoreError.busy`.
    public static let defaultBusyTimeout: Duration = .seconds(10)

    /// Each connection's SQLite page cache. SQLite's own default, 2 MiB a connection, fills over
    /// hours in `tsgateway serve` with pages of heart-rate samples, live stages and MQTT rows
    /// written once and not read again: with the writer and the pool's readers that was up to
    /// 12 MiB, which a soak saw as resident memory rising for hours. The rows the gateway reads
    /// (a watch's cursor, a few nights, the outbox) fit in this many times over.
    public static let pageCacheKiB = 512

    /// `busyTimeout`: how long a write waits while another process writes the same database.
    public init(path: String, busyTimeout: Duration = GatewayStore.defaultBusyTimeout) throws {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            try Self.createIfAbsent(path: path)
            pool = try Self.openMigrated(path: path, busyTimeout: busyTimeout)
        } catch let error as StoreError {
            throw error
        } catch let error as StorageUnwritable {
            throw error
        } catch let error as DatabaseError where error.isBusy {
            throw StoreError.busy(path: path)
        } catch let error as DatabaseError {
            if let unwritable = Self.unwritable(error, path: path) { throw unwritable }
            throw StoreError.cannotOpen(path: path, reason: error.message ?? "\(error)")
        } catch {
            if let condition = StorageCondition.of(path: Self.directory(of: path)) { throw StorageUnwritable(condition, directory: Self.directory(of: path)) }
            throw StoreError.cannotOpen(path: path, reason: error.localizedDescription)
        }
    }

    /// The directory holding the database: what a full or read-only disk is named by.
    public var directory: String { Self.directory(of: path) }

    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? FileManager.default.currentDirectoryPath : directory
    }

    /// SQLite's failure as the disk's, when it is: SQLITE_FULL is a full disk; a read-only
    /// database, an I/O error or a file that cannot be opened is the disk's when `statvfs` says
    /// it is read-only or full now (SQLite reports EROFS and a failed fsync as SQLITE_IOERR, and
    /// keeps the errno to itself). Nil: another failure.
    static func unwritable(_ error: DatabaseError, path: String) -> StorageUnwritable? {
        let directory = directory(of: path)
        switch error.resultCode {
        case .SQLITE_FULL:
            return StorageUnwritable(.full, directory: directory)
        case .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CANTOPEN:
            return StorageCondition.of(path: directory).map { StorageUnwritable($0, directory: directory) }
        default:
            return nil
        }
    }

    /// Opens the pool and brings the schema up to date. Another process may be doing the same to
    /// a new database at this moment (`tsgateway serve` starting while a script runs `tsgateway
    /// hr history --db`): SQLite then refuses the switch to WAL with SQLITE_BUSY at once, without
    /// the busy timeout, or a migration finds the table the other process has just made (GRDB
    /// picks the pending migrations before it runs them). Both are tried again after a short
    /// pause, for about 5 s in all; the next try starts from the migrations the other applied.
    ///
    /// Every connection keeps at most `pageCacheKiB` of pages.
    private static func openMigrated(path: String, busyTimeout: Duration) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout.timeInterval)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKiB)")
        }
        var attempt = 0
        while true {
            do {
                let pool = try DatabasePool(path: path, configuration: configuration)
                // GRDB's pool sets `synchronous = NORMAL` on its writer after `prepareDatabase`
                // (with its WAL set-up): a commit then reached the disk only at the next
                // checkpoint, and power cuts in a VM took back records already acknowledged to
                // the watch (scripts/e2e-powercut). FULL again, before the first write.
                try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
                try StoreMigrations.migrator.migrate(pool)
                return pool
            } catch let error as DatabaseError where attempt < 20 && (error.isBusy || error.resultCode == .SQLITE_ERROR) {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.025 * Double(attempt))
            }
        }
    }

    /// Makes an empty database file, 0600, unless one is there. Exclusively (O_EXCL): with a
    /// "does it exist? then create it" pair, a second process starting at the same moment
    /// emptied the file the first had begun to write, and both then read a malformed database
    /// (StoreConcurrencyTests saw it in about one run in ten whenever timing moved, first
    /// blamed on the page-cache pragma that moved it).
    private static func createIfAbsent(path: String) throws {
        do { try PrivateFile.createIfAbsent(path) } catch {
            if let condition = error.storageCondition { throw StorageUnwritable(condition, directory: directory(of: path)) }
            throw StoreError.cannotOpen(path: path, reason: "cannot create the file: \(error.reason)")
        }
    }

    /// The writer connection's `PRAGMA synchronous` (2: FULL).
    func writerSynchronousPragma() async throws -> Int {
        try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 0 }
    }

    /// The writer connection's `PRAGMA cache_size` (negative: KiB).
    func writerCacheSizePragma() async throws -> Int {
        try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
    }

    /// Bytes the writer connection's page cache holds now (SQLITE_DBSTATUS_CACHE_USED).
    func writerPageCacheBytes() async throws -> Int {
        try await pool.writeWithoutTransaction { db in
            var current: Int32 = 0
            var highest: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
            return Int(current)
        }
    }

    /// A write transaction; a database another process kept locked past the busy timeout is
    /// reported as `StoreError.busy`, a disk that is full or read-only as `StorageUnwritable`
    /// (the transaction is rolled back: nothing of it is stored).
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(updates)
        } catch let error as DatabaseError where error.isBusy {
            throw StoreError.busy(path: path)
        } catch let error as DatabaseError {
            if let unwritable = Self.unwritable(error, path: path) { throw unwritable }
            throw error
        }
    }
}

extension DatabaseError {
    /// SQLite gave up waiting for another connection's lock.
    var isBusy: Bool { resultCode == .SQLITE_BUSY || resultCode == .SQLITE_LOCKED }
}

public enum StoreError: CategorizedError, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case corruptValue(String)
    /// Another connection (another tsgateway process: a cron `sleep sync`, `tsgateway serve`)
    /// held the database's write lock for longer than the busy timeout.
    case busy(path: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open the database \(path): \(reason)"
        case let .corruptValue(detail): "the database holds a value that cannot be read: \(detail)"
        case let .busy(path):
            "another tsgateway process is writing the database \(path) and did not finish in time; "
                + "wait for it to end (a running `sleep sync` or `tsgateway serve`, see `ps -C tsgateway`) and try again"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .cannotOpen, .corruptValue: .storage
        // Waiting longer may succeed, as with a watch that did not answer in time.
        case .busy: .timeout
        }
    }
}

/// Which records of a watch the store holds completely: every record the watch had with a
/// start in [rangeStart, upTo). `committedUpTo` is the end of the last range the watch
/// confirmed with SLEEP_COMMIT.
public struct SyncCursor: Sendable, Hashable {
    public var rangeStart: Int64
    public var upTo: Int64
    public var committedUpTo: Int64?

    public init(rangeStart: Int64, upTo: Int64, committedUpTo: Int64? = nil) {
        self.rangeStart = rangeStart
        self.upTo = upTo
        self.committedUpTo = committedUpTo
    }
}

public struct StoredWatch: Sendable, Hashable {
    public var id: WatchID
    public var name: String?
    public var info: DeviceInfo?
    public var firstSeen: Date
    public var lastSeen: Date
    public var lastSync: Date?
}

extension Row {
    /// A column holding a watch id: text that is not an address is a corrupt value, not a crash.
    func watchID(_ column: String) throws -> WatchID {
        let text: String = self[column]
        guard let id = WatchID(text) else { throw StoreError.corruptValue("watch id \"\(text)\" in column \(column)") }
        return id
    }
}

extension DatabaseError: CategorizedError {
    public var category: ErrorCategory { .storage }
}
