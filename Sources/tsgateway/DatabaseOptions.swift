import ArgumentParser
import Foundation
import TSGatewayAPI
import TSGatewayService
import TSStore

/// The database of commands that read (or fix) what `tsgateway serve` stored, without a watch:
/// --db, else the `database:` of --config, else that of /etc/tsgateway/config.yaml if it
/// exists, else $XDG_DATA_HOME/tsgateway/tsgateway.sqlite.
struct DatabaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var db: String?
    @Option(help: ArgumentHelp("Take the database from this configuration file (the `database:` key).", valueName: "file"))
    var config: String?

    func validate() throws {
        if db != nil && config != nil { throw ValidationError("give --db or --config, not both") }
    }

    func databasePath() throws -> String {
        if let db { return db }
        let file = config ?? (FileManager.default.fileExists(atPath: GatewayConfiguration.defaultPath) ? GatewayConfiguration.defaultPath : nil)
        guard let file else { return GatewayStore.defaultPath() }
        do {
            return try GatewayConfiguration.load(path: file).database
        } catch {
            throw CLIFailure(error.description, status: .config)
        }
    }

    /// Opens an existing database (a missing one is an error, not created empty); `defaultPath`:
    /// the one without --db, instead of the configuration's.
    func openStore(defaultPath: String? = nil) throws -> GatewayStore {
        let path = try db ?? defaultPath ?? databasePath()
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIFailure("no database at \(path) (nothing stored yet? use --db or --config)", status: .noInput)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CLIFailure("cannot read \(path): permission denied (run as the user of `tsgateway serve`)", status: .permission)
        }
        do {
            return try GatewayStore(path: path)
        } catch {
            throw CLIFailure("\(error)", status: .ioError)
        }
    }
}
