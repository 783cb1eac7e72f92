import ArgumentParser

// Replaced by the sleep-analysis `sleep` group when it is merged (it adds `analyze`).
struct SleepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep", abstract: "Sleep records: sync from the watch.", subcommands: [SleepSyncCommand.self])
}
