import ArgumentParser
import Foundation
import TSDevice
import TSStore
import TSGatewayAPI
import TSModels
import TSWatchService

struct SleepSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Copy raw sleep records from the watch into the database.",
        discussion: """
            Resumes where the last sync stopped, and never stores a record twice. Records are \
            acknowledged to the watch only after they are safely on disk.

            Examples:
              tsgateway sleep sync --since 7d
              tsgateway sleep sync --from 2026-11-01 --to 2026-11-07
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(help: ArgumentHelp("How far back: a number of days, hours or weeks, e.g. 7d, 36h, 2w.", valueName: "age"))
    var since: String?
    @Option(help: ArgumentHelp("First day to sync (YYYY-MM-DD, local time).", valueName: "date"))
    var from: String?
    @Option(help: ArgumentHelp("Last day to sync, inclusive (YYYY-MM-DD; default: up to now).", valueName: "date"))
    var to: String?
    @Option(help: ArgumentHelp("Reconnect at most this many times when the link drops mid-sync; 0 stops at the first drop (the next sync resumes).", valueName: "n"))
    var reconnects = 5
    @Flag(help: "Print the result as JSON: {watch, from, to, fetched, stored, deletedOnWatch, reconnects, enqueued, heartRateFetched, heartRateStored}.")
    var json = false

    func validate() throws {
        if since != nil && from != nil { throw ValidationError("give --since or --from, not both") }
        if to != nil && from == nil { throw ValidationError("--to needs --from") }
        guard (0...100).contains(reconnects) else { throw ValidationError("--reconnects must be 0…100, got \(reconnects)") }
    }

    func run() async throws {
        let now = Date()
        let start: Date
        if let from {
            start = try DateArgument.day(from, flag: "--from")
        } else {
            start = now.addingTimeInterval(-(try DateArgument.age(since ?? "7d")))
        }
        let end = try to.map { try DateArgument.day($0, flag: "--to").addingTimeInterval(86_400) }
        if let end, end <= start { throw CLIFailure("--to \(to ?? "") is before --from \(from ?? "")", status: .usage) }
        let progress = ProgressLine(label: "syncing sleep records")
        let report = try await WatchAccessor.run(connection) { watch in
            let request = SyncRequest(from: Int64(start.timeIntervalSince1970), to: end.map { Int64($0.timeIntervalSince1970) }, reconnects: reconnects)
            let report = try await watch.syncSleep(request) { step in progress.update(done: step.received, total: step.total) }
            return (watch.watchId, report)
        }
        progress.finish()
        let (watchId, result) = report
        if json {
            try JSONOutput.printWithDates(Output(watch: watchId, from: start, to: end, result: result))
        } else {
            var line = "synced \(result.fetched) record\(result.fetched == 1 ? "" : "s") (\(result.stored) new) since \(start.formatted(date: .abbreviated, time: .shortened))"
            if result.deletedOnWatch > 0 { line += "; the watch freed \(result.deletedOnWatch)" }
            if result.reconnects > 0 { line += "; reconnected \(result.reconnects)×" }
            if result.heartRateFetched > 0 {
                line += "; \(result.heartRateFetched) heart-rate sample\(result.heartRateFetched == 1 ? "" : "s") from the watch's history (\(result.heartRateStored) new)"
            }
            if let refused = result.heartRateError { line += "; the heart-rate history was not synced (\(refused))" }
            if result.enqueued > 0 { line += "; \(result.enqueued) night\(result.enqueued == 1 ? "" : "s") queued for upload" }
            print(line)
        }
    }
}

extension SleepSyncCommand {
    /// `--json`: the sync's result (`SleepSyncReport`, the shape D-Bus and MQTT report too) with
    /// the watch and the range asked for beside its fields.
    struct Output: Encodable {
        var watch: WatchID
        var from: Date
        var to: Date?
        var result: SleepSyncReport

        enum CodingKeys: String, CodingKey { case watch, from, to }

        func encode(to encoder: any Encoder) throws {
            try result.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(watch, forKey: .watch)
            try container.encode(from, forKey: .from)
            try container.encodeIfPresent(to, forKey: .to)
        }
    }
}

enum DateArgument {
    /// Local midnight of a YYYY-MM-DD date.
    static func day(_ text: String, flag: String, calendar: Calendar = .current) throws -> Date {
        let parts = text.split(separator: "-").map { Int($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: year, month: month, day: day)
        else { throw CLIFailure("\(flag) \"\(text)\" is not a date YYYY-MM-DD", status: .usage) }
        return date
    }

    /// An instant: `YYYY-MM-DD` (local midnight; with `dayEnd`, the midnight after it, so the
    /// day is included), `YYYY-MM-DDTHH:MM[:SS]` in local time, or either with `Z` or an offset
    /// such as `+01:00`. A local time the calendar does not have (2026-02-30, the hour a DST
    /// change skips) is refused.
    static func instant(_ text: String, flag: String, dayEnd: Bool = false, calendar: Calendar = .current) throws -> Date {
        let refusal = CLIFailure("\(flag) \"\(text)\" is not a date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM[:SS] (local time, or ending in Z or +HH:MM)", status: .usage)
        let pattern = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?)?$/
        guard let match = text.wholeMatch(of: pattern),
              let year = Int(match.1), let month = Int(match.2), let day = Int(match.3)
        else { throw refusal }
        var calendar = calendar
        if let zone = match.7 {
            if zone == "Z" {
                calendar.timeZone = TimeZone(identifier: "UTC")!
            } else {
                let digits = zone.dropFirst().filter(\.isNumber)
                guard let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)), hours <= 18, minutes < 60,
                      let offset = TimeZone(secondsFromGMT: (zone.first == "-" ? -1 : 1) * (hours * 3600 + minutes * 60))
                else { throw refusal }
                calendar.timeZone = offset
            }
        }
        var wanted = DateComponents(year: year, month: month, day: day)
        if let hour = match.4, let minute = match.5 {
            wanted.hour = Int(hour)
            wanted.minute = Int(minute)
            wanted.second = match.6.flatMap { Int($0) } ?? 0
        }
        var fields: Set<Calendar.Component> = [.year, .month, .day]
        if wanted.hour != nil { fields.formUnion([.hour, .minute, .second]) }
        guard let date = calendar.date(from: wanted), calendar.dateComponents(fields, from: date) == wanted else {
            throw CLIFailure("\(flag) \"\(text)\" does not exist in \(calendar.timeZone.identifier) (a day the month lacks, or a time a clock change skips)", status: .usage)
        }
        guard dayEnd, wanted.hour == nil else { return date }
        return calendar.date(byAdding: .day, value: 1, to: date) ?? date
    }

    /// Seconds in an age such as 7d, 36h, 2w.
    static func age(_ text: String, flag: String = "--since") throws -> TimeInterval {
        let units: [Character: Double] = ["h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last, let seconds = units[unit], let count = Int(text.dropLast()), count > 0, count <= 3650 else {
            throw CLIFailure("\(flag) \"\(text)\" is not an age such as 7d, 36h or 2w", status: .usage)
        }
        return Double(count) * seconds
    }
}

/// Progress on standard error: a redrawn bar on a terminal, a plain line per second otherwise.
final class ProgressLine: @unchecked Sendable {
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let lock = NSLock()
    private let started = Date()
    private var lastPrinted = Date.distantPast
    private var drewBar = false

    init(label: String) { self.label = label }

    /// `total` 0: not known (the watch announces none); the count and the rate alone.
    func update(done: Int, total: Int) {
        lock.lock(); defer { lock.unlock() }
        let now = Date()
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let remaining = rate > 0 ? Double(total - done) / rate : 0
        guard total > 0 else {
            if isTerminal {
                FileHandle.standardError.write(Data("\r\(label): \(done) records, \(Int(rate))/s ".utf8))
                drewBar = true
            } else if now.timeIntervalSince(lastPrinted) >= 1 {
                lastPrinted = now
                FileHandle.standardError.write(Data("\(label): \(done) records, \(Int(rate))/s\n".utf8))
            }
            return
        }
        if isTerminal {
            let width = 24
            let filled = total > 0 ? min(width, width * done / total) : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) \(bar) \(done)/\(total) records, \(Int(rate))/s, ETA \(Int(remaining.rounded())) s ".utf8))
            drewBar = true
        } else if now.timeIntervalSince(lastPrinted) >= 1 || done == total {
            lastPrinted = now
            FileHandle.standardError.write(Data("\(label): \(done)/\(total) records, \(Int(rate))/s\n".utf8))
        }
    }

    func finish() {
        lock.lock(); defer { lock.unlock() }
        if drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
