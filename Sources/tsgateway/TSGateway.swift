import ArgumentParser
import Foundation
import TSFamilies
import TSFamilyKit
import TSModels

@main
struct TSGateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tsgateway",
        abstract: "A Bluetooth LE gateway for smart watches on Linux, through BlueZ.",
        discussion: """
            Pairs with watches through BlueZ, syncs their sleep records into a local database, \
            reads and writes their alarms and monitoring settings. Dialects: protocol v1, this \
            project's open protocol (the built-in simulator speaks it; no retail watch does yet); \
            TopStep's NPK protocol (`--dialect npk`, reconstructed from TopStep's SDK); QRing \
            smart rings (`--dialect qring`, Colmi and Yawell); Huami bands (`--dialect huami`, \
            Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2, with the band's auth key); Garmin watches \
            (`--dialect garmin`, Forerunner, Fenix, Venu, Instinct: sleep and heart rate from \
            their FIT files); and the standard services of any band (Device Information, \
            Battery, Current Time, Heart Rate). NPK, QRing, Huami and Garmin work against the \
            project's simulated devices and have not been tried on physical ones yet.
            """,
        version: GatewayVersion.current,
        subcommands: [
            AdapterCommand.self,
            ScanCommand.self,
            ProbeCommand.self,
            PairCommand.self,
            UnpairCommand.self,
            SimulateCommand.self,
            InfoCommand.self,
            DevicesCommand.self,
            TimeCommand.self,
            AlarmsCommand.self,
            MonitorCommand.self,
            HeartRateCommand.self,
            SleepCommand.self,
            ServeCommand.self,
            EventsCommand.self,
            SessionCommand.self,
            OutboxCommand.self,
            ProtocolCommand.self,
            CaptureCommand.self,
            ReportProblemCommand.self,
        ]
    )

    /// Runs the command and turns a `CLIFailure` into its message on stderr and its exit status.
    static func main() async {
        do {
            var command = try parseAsRoot(GlobalOptions.movedAfterSubcommands(Array(CommandLine.arguments.dropFirst())))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("tsgateway: \(failure.message)\n".utf8))
            Foundation.exit(failure.status.rawValue)
        } catch let mistake as AlarmTextError {
            FileHandle.standardError.write(Data("tsgateway: \(mistake.message)\n".utf8))
            Foundation.exit(ExitStatus.usage.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}

/// Options every device command takes may also come first, as in `tsgateway --simulate sleep
/// sync`: they are moved behind the subcommand names before parsing. An option that is not one
/// of them moves too, so that the subcommand names it in its error (left in front, the root
/// command would blame the first known option instead).
enum GlobalOptions {
    static let flags: Set<String> = ["--simulate", "-v", "-vv", "--verbose"]
    static let withValue: Set<String> = ["--db", "--device", "--adapter", "--dialect"]

    static func movedAfterSubcommands(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-") {
            let argument = arguments[index]
            if withValue.contains(argument), index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                leading.append(argument)
                index += 1
            }
        }
        let rest = Array(arguments[index...])
        guard !leading.isEmpty, !rest.isEmpty else { return arguments }
        // After the subcommand path (the leading words that are not options).
        let path = rest.prefix { !$0.hasPrefix("-") }
        // The parts as arrays: Swift 6.2 (the arm64 package's compiler) found no `+` for
        // `[String] + leading + rest.dropFirst(…)`.
        let afterPath: [String] = Array(rest[path.count...])
        return Array(path) + leading + afterPath
    }
}
