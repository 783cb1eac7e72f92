import ArgumentParser
import Foundation
import TSDevice
import TSFiles
import TSModels
import TSSleep
import TSGatewayAPI
import TSGatewayService
import TSReport
import TSStore
import TSWatchService

struct SleepShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show daily sleep reports from the synced records, with a hypnogram per night.",
        discussion: """
            Works offline from the database: run `tsgateway sleep sync` first. Days run from \
            20:00 to 20:00 local time (a night starting at 21:00 belongs to the next date). \
            --svg also writes the latest night's hypnogram (of the range; with --date, that \
            date's night) as an SVG file, created readable by its owner only.
            A night or nap during which `tsgateway serve` stored heart-rate samples gets a line \
            with their minimum, maximum and average (`heartRate` in --json).

            Examples:
              tsgateway sleep show --last 7d
              tsgateway sleep show --date 2026-11-20 --json
              tsgateway sleep show --date 2026-11-20 --svg night.svg
            """)
    @OptionGroup var source: StoredWatchOptions
    @Option(help: ArgumentHelp("How many days back, e.g. 7d or 2w (default 7d).", valueName: "age"))
    var last: String?
    @Option(help: ArgumentHelp("One day (YYYY-MM-DD).", valueName: "date"))
    var date: String?
    @Option(help: "Statistics rule 0–3 (default: the watch's own).")
    var rule: Int?
    @Option(help: ArgumentHelp("IANA time zone (default: this computer's).", valueName: "zone"))
    var tz: String?
    @Flag(inversion: .prefixedNo, help: "Draw a hypnogram under each day.")
    var chart = true
    @Flag(help: "Print JSON: {\"watch\", \"timeZone\", \"rule\", \"days\": [daily models as in protocol-spec/sleep-statistics.md; a segment with stored heart-rate samples has \"heartRate\": {\"minimum\", \"average\", \"maximum\", \"samples\"}]}.")
    var json = false
    @Option(help: ArgumentHelp("Also write the latest night's hypnogram to this SVG file.", valueName: "file"))
    var svg: String?
    @Flag(help: "Overwrite the --svg file if it exists.")
    var force = false

    func validate() throws {
        if last != nil && date != nil { throw ValidationError("give --last or --date, not both") }
        if let rule, !(0...3).contains(rule) { throw ValidationError("--rule must be 0, 1, 2 or 3; got \(rule)") }
    }

    func run() async throws {
        let zone = try tz.map { name -> TimeZone in
            guard let zone = TimeZone(identifier: name) else { throw CLIFailure("unknown time zone \"\(name)\"; use an IANA name such as Europe/Berlin", status: .usage) }
            return zone
        } ?? .current
        let clock = LocalDayClock(timeZone: zone)
        let first: LocalDate, lastDay: LocalDate
        if let date {
            // A date the calendar moves (2026-02-30 → 03-02) does not exist.
            guard let day = LocalDate(date), clock.adding(days: 0, to: day) == day else {
                throw CLIFailure("--date \"\(date)\" is not a date YYYY-MM-DD", status: .usage)
            }
            (first, lastDay) = (day, day)
        } else {
            let days = Int(try DateArgument.age(last ?? "7d", flag: "--last") / 86_400)
            let today = clock.localDateAndHour(of: Int64(Date().timeIntervalSince1970)).date
            (first, lastDay) = (clock.adding(days: -max(days - 1, 0), to: today), clock.adding(days: 1, to: today))
        }
        if let svg, FileManager.default.fileExists(atPath: svg), !force {
            throw CLIFailure("\(svg) exists; add --force to overwrite it", status: .ioError)
        }
        let askedRule = rule.flatMap { StatisticsRule(rawValue: UInt8($0)) }
        let report = try await source.dailySleepReport(first: first, last: lastDay, zone: zone, rule: askedRule).report
        if let svg { try writeHypnogram(of: report, to: svg, zone: zone) }
        if json { return try JSONOutput.print(report) }
        let watchId = report.watch, statisticsRule = report.statisticsRule, days = report.days
        guard !days.isEmpty else {
            throw CLIFailure("no sleep records for \(watchId) in that range; run `tsgateway sleep sync --since 7d\(source.simulate ? " --simulate" : "")` first", status: .failure)
        }
        print("Sleep of \(watchId) (rule \(statisticsRule.rawValue), \(SleepReportFormatter.ruleName(statisticsRule)); \(zone.identifier))")
        for day in days {
            print("")
            print(SleepDayView.table(day, zone: zone))
            for line in SleepDayView.heartRateLines(day, zone: zone) { print(line) }
            if chart {
                for night in day.nightSleeps { print(Hypnogram.draw(night, zone: zone, colour: Hypnogram.useColour)) }
            }
        }
    }
}

extension SleepShowCommand {
    /// The hypnogram of the latest night in the report, as a standalone SVG file (0600).
    func writeHypnogram(of report: DailySleepReport, to path: String, zone: TimeZone) throws {
        guard let night = report.days.last(where: { !$0.nightSleeps.isEmpty }), let document = HypnogramChart.document(night, zone: zone) else {
            throw CLIFailure("no night sleep for \(report.watch) \(date.map { "on \($0)" } ?? "in that range") to draw; "
                             + "run `tsgateway sleep sync --since 7d\(source.simulate ? " --simulate" : "")` first", status: .failure)
        }
        do { try PrivateFile.write(document, to: path) } catch { throw CLIFailure.from(error) }
        FileHandle.standardError.write(Data("wrote the hypnogram of the night to \(night.date) to \(path)\n".utf8))
    }
}

/// Options of commands that read the database only (no Bluetooth).
struct StoredWatchOptions: ParsableArguments {
    @Flag(help: "Use the simulated watch's records.")
    var simulate = false
    @Option(help: ArgumentHelp("The watch (default: the only known one).", valueName: "address"))
    var device: String?
    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var db: String?
    @OptionGroup var syncedWith: SyncedWithOptions

    /// The store and the id of the watch meant: the simulated one, the one named by --device,
    /// or the only known watch.
    func open() async throws -> (store: GatewayStore, watchId: WatchID) {
        let store: GatewayStore
        do { store = try GatewayStore(path: db ?? GatewayStore.defaultPath()) } catch { throw CLIFailure.from(error) }
        if simulate { return (store, DeviceSession.simulatedWatchId) }
        let known = try await store.watches().map { WatchIdentity(id: $0.id, name: $0.name) }
        do {
            guard let chosen = try WatchSelection.choose(device, among: known) else { throw WatchSelectionError.unknown(device ?? "") }
            return (store, chosen.id)
        } catch {
            throw CLIFailure.from(error)
        }
    }
}

/// The other options of the command that synced (`sleep sync --simulate --dialect NAME -v`),
/// which a command reading only the database takes too, so the sync's command line reads back
/// what it stored (README's walk-through pattern). They change nothing of what is read.
struct SyncedWithOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Taken as `sleep sync` takes it (\(DialectChoice.list)); what is stored is read whatever it names.", valueName: "dialect"),
            transform: DialectChoice.parse)
    var dialect: Dialect?
    @Option(help: ArgumentHelp("Taken as `sleep sync` takes it; no adapter is used.", valueName: "hciN"))
    var adapter: String?
    @Flag(name: [.short, .long], help: "Taken as `sleep sync` takes it; nothing is logged.")
    var verbose: Int

    func validate() throws {
        try ConnectionOptions.checkAdapter(adapter)
    }
}

/// One day's rows: each night segment and nap, then the day's total.
enum SleepDayView {
    static func table(_ day: DailySleepModel, zone: TimeZone) -> String {
        var rows = [["\(day.date)", "from", "to", "asleep", "deep", "light", "rem", "awake", "wakes", "quality"]]
        func row(_ label: String, _ summary: SleepSummary, wakes: Int) -> [String] {
            [label, SleepReportFormatter.clock(summary.start, zone), SleepReportFormatter.clock(summary.end, zone),
             SleepReportFormatter.hoursAndMinutes(summary.totalSleepDuration), "\(summary.deepSleepPercentage)%", "\(summary.lightSleepPercentage)%",
             "\(summary.remPercentage)%", "\(summary.awakePercentage)%", "\(wakes)", "\(summary.qualityScore)"]
        }
        for night in day.nightSleeps { rows.append(row("  night", night.summary, wakes: night.metrics.numberOfAwakenings)) }
        for nap in day.validNaps { rows.append(row("  nap", nap.summary, wakes: nap.metrics.numberOfAwakenings)) }
        let total = day.dailySummary
        rows.append(["  total", "", "", SleepReportFormatter.hoursAndMinutes(total.totalSleepDuration), "\(total.deepSleepPercentage)%",
                     "\(total.lightSleepPercentage)%", "\(total.remPercentage)%", "\(total.awakePercentage)%", "\(day.metrics.numberOfAwakenings)", "\(total.qualityScore)"])
        return TextTable.render(rows)
    }

    /// A line per night segment and nap during which heart-rate samples were stored:
    /// `  night 23:10–06:45  heart rate 52–68 bpm, average 57.3 (412 samples)`.
    static func heartRateLines(_ day: DailySleepModel, zone: TimeZone) -> [String] {
        let segments = day.nightSleeps.map { ("night", $0) } + day.validNaps.map { ("nap", $0) }
        return segments.compactMap { label, segment in
            segment.heartRate.map { summary in
                "  \(label) \(SleepReportFormatter.clock(segment.summary.start, zone))–\(SleepReportFormatter.clock(segment.summary.end, zone))  "
                    + HeartRateText.line(summary)
            }
        }
    }
}

/// A hypnogram in the terminal: one row per stage, one column per slice of the night.
enum Hypnogram {
    static let width = 60

    /// Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
    static var useColour: Bool {
        isatty(STDOUT_FILENO) == 1 && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
    }

    static func draw(_ segment: SleepSegment, zone: TimeZone, colour: Bool = false) -> String {
        let start = segment.summary.start, end = max(segment.summary.end, start + 1)
        let slice = Double(end - start) / Double(width)
        let stages: [SleepStage?] = (0..<width).map { column in
            let instant = start + Int64(Double(column) * slice + slice / 2)
            return segment.detailItems.first { $0.start <= instant && instant < $0.end }?.stage
        }
        var lines: [String] = []
        let colours: [SleepStage: String] = [.awake: "\u{1B}[33m", .rem: "\u{1B}[35m", .light: "\u{1B}[36m", .deep: "\u{1B}[34m"]
        for (stage, label) in [(SleepStage.awake, "awake"), (.rem, "REM  "), (.light, "light"), (.deep, "deep ")] {
            let bar = stages.map { $0 == stage ? "█" : " " }.joined()
            lines.append("    \(label) │" + (colour ? (colours[stage] ?? "") + bar + "\u{1B}[0m" : bar) + "│")
        }
        let from = SleepReportFormatter.clock(start, zone), to = SleepReportFormatter.clock(end, zone)
        lines.append("          └" + String(repeating: "─", count: width) + "┘")
        lines.append("           " + from + String(repeating: " ", count: max(1, width - from.count - to.count)) + to)
        return lines.joined(separator: "\n")
    }
}
