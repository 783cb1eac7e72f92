import ArgumentParser
import Foundation

/// `tsgateway sleep …`: the sleep commands, one file each.
struct SleepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep",
        abstract: "Sleep records: sync them from the watch, and analyse them into daily reports.",
        subcommands: [SleepSyncCommand.self, SleepShowCommand.self, SleepReportCommand.self, SleepExportCommand.self, SleepAnalyzeCommand.self]
    )
}
