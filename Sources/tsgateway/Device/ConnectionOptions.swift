import ArgumentParser
import Foundation
import Logging
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore

/// `--dialect`: a dialect named on the command line, checked against the ones this build speaks.
enum DialectChoice {
    static func parse(_ text: String) throws -> Dialect {
        let name = Dialect(rawValue: text)
        do { _ = try WatchFamilies.dialect(named: name) } catch { throw ValidationError("--dialect \(error)") }
        return name
    }

    static var list: String { WatchFamilies.dialects.map(\.name.rawValue).joined(separator: ", ") }
}

/// Options every command that talks to a watch takes.
struct ConnectionOptions: ParsableArguments {
    @Flag(help: "Use the built-in simulated watch instead of Bluetooth; its state persists between runs.")
    var simulate = false

    @Option(help: ArgumentHelp("The watch to use, by address or name (default: the last paired watch).", valueName: "address|name"))
    var device: String?

    @Option(help: ArgumentHelp("The Bluetooth adapter to use.", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("The database file (default: $XDG_DATA_HOME/tsgateway/tsgateway.sqlite).", valueName: "path"))
    var db: String?

    @Option(help: ArgumentHelp("The dialect the watch speaks, when its GATT services do not tell (\(DialectChoice.list)).", valueName: "dialect"),
            transform: DialectChoice.parse)
    var dialect: Dialect?

    @Flag(name: [.short, .long], help: "Log what happens to standard error (-vv for protocol frames).")
    var verbose: Int

    func validate() throws {
        try Self.checkAdapter(adapter)
    }

    static func checkAdapter(_ adapter: String?) throws {
        if let adapter, !adapter.hasPrefix("hci") || Int(adapter.dropFirst(3)) == nil {
            throw ValidationError("--adapter must look like hci0, hci1, …; got \"\(adapter)\"")
        }
    }

    var databasePath: String { db ?? GatewayStore.defaultPath() }

    func makeLogger() -> Logger { Logging.logger("tsgateway", verbose: verbose, quiet: .warning) }
}

enum Logging {
    /// swift-log allows one bootstrap per process.
    static let bootstrapOnce: Void = LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .trace
        return handler
    }

    /// The central's traffic (`WatchConfiguration.traffic`) as info lines of `logger`; nil when
    /// `logger` does not log info (no `-v`), so that the central builds no lines.
    static func traffic(to logger: Logger) -> (@Sendable (String) -> Void)? {
        guard logger.logLevel <= .info else { return nil }
        return { line in logger.info("watch: \(line)") }
    }

    /// A logger at `quiet` by default, info with -v, everything with -vv.
    static func logger(_ label: String, verbose: Int, quiet: Logger.Level) -> Logger {
        bootstrapOnce
        var logger = Logger(label: label)
        logger.logLevel = switch verbose {
        case 0: quiet
        case 1: .info
        default: .trace
        }
        return logger
    }
}

enum GatewayPaths {
    /// The simulated watch's own memory, beside the database it belongs to.
    /// A database named without a folder (`--db week.sqlite`) is in the current directory, and so
    /// is its simulated watch's file (it was "/simulated-watch.json": the root folder).
    static func simulatorStatePath(databasePath: String) -> String {
        let directory = (databasePath as NSString).deletingLastPathComponent
        return (directory.isEmpty ? "." : directory) + "/simulated-watch.json"
    }
}
