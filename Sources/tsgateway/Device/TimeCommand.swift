import ArgumentParser
import Foundation

struct TimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "time", abstract: "The watch's clock.", subcommands: [Sync.self])

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the watch's clock and time zone from this computer's.",
            discussion: "Refused (exit 75, with the reason) while this computer's clock is not trusted: a time-sync service runs and has not synchronised it yet, or it is earlier than this build or than the newest data stored. Nothing to wait for where no time-sync service runs. TSGATEWAY_CLOCK=trusted|untrusted overrides the judgement.")
        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Set the watch's clock even though this computer's clock is not trusted.")
        var force = false

        func run() async throws {
            let zone = TimeZone.current
            try await ClockCheck.requireTrusted(connection, force: force)
            try await WatchAccessor.run(connection) { watch in try await watch.syncTime() }
            print("set the watch's clock to \(Date().formatted(date: .omitted, time: .standard)) \(zone.identifier)")
        }
    }
}
