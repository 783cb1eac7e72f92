import Foundation
import GRDB
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

    public init(path: String) throws {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            if !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                    throw StoreError.cannotOpen(path: path, reason: "cannot create the file (is the directory writable?)")
                }
            }
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try StoreMigrations.migrator.migrate(pool)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: error.message ?? "\(error)")
        } catch {
            throw StoreError.cannotOpen(path: path, reason: error.localizedDescription)
        }
    }
}

public enum StoreError: CategorizedError, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case corruptValue(String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open the database \(path): \(reason)"
        case let .corruptValue(detail): "the database holds a value that cannot be read: \(detail)"
        }
    }

    public var category: ErrorCategory { .storage }
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
    public var id: String
    public var name: String?
    public var info: DeviceInfo?
    public var firstSeen: Date
    public var lastSeen: Date
    public var lastSync: Date?
}

extension DatabaseError: CategorizedError {
    public var category: ErrorCategory { .storage }
}
