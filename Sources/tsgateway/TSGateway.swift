import ArgumentParser
import Foundation

@main
struct TSGateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tsgateway",
        abstract: "A Bluetooth LE gateway for TopStep-family smart watches.",
        discussion: """
            Pairs with watches through BlueZ, syncs their sleep records into a local database, \
            reads and writes their alarms and monitoring settings.
            """,
        version: "0.1.0",
        subcommands: [
            AdapterCommand.self,
            ScanCommand.self,
            InfoCommand.self,
            DevicesCommand.self,
            TimeCommand.self,
            AlarmsCommand.self,
            MonitorCommand.self,
            SleepCommand.self,
            ProtocolCommand.self,
        ]
    )

    /// Runs the command and turns a `CLIFailure` into its message on stderr and its exit status.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("tsgateway: \(failure.message)\n".utf8))
            Foundation.exit(failure.status.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}
