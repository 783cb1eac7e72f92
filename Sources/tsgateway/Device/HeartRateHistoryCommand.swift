import ArgumentParser
import Foundation
import TSModels
import TSStore
import TSWatchService

extension HeartRateCommand {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the heart-rate samples stored in the database (no Bluetooth needed).",
            discussion: """
                `tsgateway serve` stores every Heart Rate Measurement a watch sends while it holds \
                the link; this reads them back, oldest first: the local time each arrived, beats \
                per minute, sensor contact, energy expended and RR intervals, then the count, range \
                and average. Nothing stored in the range is exit status 1 (with --json: no lines, 0).

                The database is --db, else the `database:` of --config, else that of \
                /etc/tsgateway/config.yaml if it exists, else $XDG_DATA_HOME/tsgateway/tsgateway.sqlite.

                Examples:
                  tsgateway hr history --since 12h
                  tsgateway hr history --from 2026-11-20T22:00 --to 2026-11-21T07:00 --json
                  tsgateway hr history --device AA:BB:CC:DD:EE:FF --since 7d
                  tsgateway hr history --db /var/lib/tsgateway/tsgateway.sqlite --json
                """)
        @OptionGroup var database: DatabaseOptions
        @Option(help: ArgumentHelp("The watch (default: the only one the database knows).", valueName: "address"))
        var device: String?
        @Flag(help: "The simulated watch's samples (`sleep sync --simulate` stored them in --db or the default database).")
        var simulate = false
        @OptionGroup var syncedWith: SyncedWithOptions
        @Option(help: ArgumentHelp("How far back: hours, days or weeks, e.g. 12h, 7d, 2w (default 24h).", valueName: "age"))
        var since: String?
        @Option(help: ArgumentHelp("From this date (YYYY-MM-DD, local midnight) or time (YYYY-MM-DDTHH:MM[:SS], local unless it ends in Z or +HH:MM).", valueName: "time"))
        var from: String?
        @Option(help: ArgumentHelp("Up to this time, or to the end of this date (default: now).", valueName: "time"))
        var to: String?
        @Flag(help: #"Print one JSON object a line, as `hr watch --json`: {"type":"heartRate","watch","time","bpm","sensorContact","energyExpended"?,"rrIntervals"}."#)
        var json = false

        func validate() throws {
            if since != nil && from != nil { throw ValidationError("give --since or --from, not both") }
            if to != nil && from == nil { throw ValidationError("--to needs --from") }
            if simulate, database.config != nil { throw ValidationError("--simulate reads the simulated watch's database (--db, or the default one); leave out --config") }
            if simulate, device != nil { throw ValidationError("give --simulate or --device, not both") }
        }

        func run() async throws {
            let now = Date()
            let start: Date, end: Date
            if let from {
                start = try DateArgument.instant(from, flag: "--from")
                end = try to.map { try DateArgument.instant($0, flag: "--to", dayEnd: true) } ?? now
                guard end > start else { throw CLIFailure("--to \(to ?? "") is not after --from \(from)", status: .usage) }
            } else {
                start = now.addingTimeInterval(-(try DateArgument.age(since ?? "24h")))
                end = now
            }
            let store = try database.openStore(defaultPath: simulate ? GatewayStore.defaultPath() : nil)
            let samples: [HeartRateSample], watchId: WatchID
            do {
                if simulate {
                    watchId = DeviceSession.simulatedWatchId
                    samples = try await store.heartRate(watch: watchId, from: start, to: end)
                    return try show(samples, of: watchId, from: start, to: end)
                }
                let known = try await store.watches().map { WatchIdentity(id: $0.id, name: $0.name) }
                guard let chosen = try WatchSelection.choose(device, among: known) else {
                    throw CLIFailure("the database \(store.path) has nothing of \"\(device ?? "")\"; it knows \(known.map(\.id.rawValue).joined(separator: ", "))",
                                     status: ExitStatus(.deviceNotFound))
                }
                watchId = chosen.id
                samples = try await store.heartRate(watch: watchId, from: start, to: end)
            } catch WatchSelectionError.noneKnown {
                throw CLIFailure("the database \(store.path) knows no watch yet: nothing was stored in it", status: ExitStatus(.deviceNotFound))
            } catch let failure as CLIFailure {
                throw failure
            } catch {
                throw CLIFailure.from(error)
            }
            try show(samples, of: watchId, from: start, to: end)
        }

        func show(_ samples: [HeartRateSample], of watchId: WatchID, from start: Date, to end: Date) throws {
            if json {
                let encoder = HeartRateLine.encoder()
                for sample in samples { print(try HeartRateLine(watch: watchId, sample: sample).json(encoder)) }
                return
            }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            guard let summary = HeartRateSummary(samples) else {
                throw CLIFailure("no heart-rate samples of \(watchId) from \(formatter.string(from: start)) to \(formatter.string(from: end)); "
                                 + "`tsgateway serve` stores them while it holds the link of a watch with the Heart Rate service", status: .failure)
            }
            for sample in samples { print(HeartRateLine(watch: watchId, sample: sample).text(time: formatter.string(from: sample.time))) }
            print("\(summary.samples) sample\(summary.samples == 1 ? "" : "s") of \(watchId): \(HeartRateText.range(summary))")
        }
    }
}

/// How a heart-rate summary reads in text output.
enum HeartRateText {
    /// `52–68 bpm, average 57.3`.
    static func range(_ summary: HeartRateSummary) -> String {
        "\(summary.minimum)–\(summary.maximum) bpm, average \(String(format: "%.1f", summary.average))"
    }

    /// `heart rate 52–68 bpm, average 57.3 (412 samples)`.
    static func line(_ summary: HeartRateSummary) -> String {
        "heart rate \(range(summary)) (\(summary.samples) sample\(summary.samples == 1 ? "" : "s"))"
    }
}
