import ArgumentParser
import Foundation
import TSFiles
import TSGatewayAPI
import TSGatewayService
import TSModels
import TSReport
import TSSleep
import TSWatchService

struct SleepReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write an HTML sleep report: a hypnogram per night, stage bars per day, trends.",
        discussion: """
            One self-contained page (inline SVG and CSS, no scripts, opens offline) for a \
            browser, a Home Assistant panel or a small web server: per night a hypnogram with \
            the naps beside it, per day the sleep stacked by stage, and the trends of total \
            sleep, efficiency, quality and (when the nights carry it) night heart rate with \
            their averages. Light and dark follow the viewer's setting; the colours stay \
            distinguishable with colour-blindness. Like `sleep show` it reads the synced \
            records (through `tsgateway serve` when it runs). The file is created readable by \
            its owner only (health data) and replaced atomically.

            Examples:
              tsgateway sleep report --last 30d --out sleep.html
              tsgateway sleep report --from 2026-11-01 --to 2026-11-20 --rule 2 --out november.html
            """)
    @OptionGroup var source: StoredWatchOptions
    @Option(help: ArgumentHelp("How many days up to today, e.g. 30d or 2w (default 30d).", valueName: "age"))
    var last: String?
    @Option(help: ArgumentHelp("First day (YYYY-MM-DD).", valueName: "date"))
    var from: String?
    @Option(help: ArgumentHelp("Last day, inclusive (YYYY-MM-DD; default today).", valueName: "date"))
    var to: String?
    @Option(help: "Statistics rule 0–3 (default: the watch's own).")
    var rule: Int?
    @Option(help: ArgumentHelp("IANA time zone of the dates and clock times (default: this computer's).", valueName: "zone"))
    var tz: String?
    @Option(help: ArgumentHelp("The HTML file to write; - writes to standard output.", valueName: "file"))
    var out: String
    @Flag(help: "Overwrite --out if it exists.")
    var force = false

    static let longestRange = 366

    func validate() throws {
        if last != nil && from != nil { throw ValidationError("give --last or --from/--to, not both") }
        if to != nil && from == nil { throw ValidationError("--to needs --from") }
        if let rule, !(0...3).contains(rule) { throw ValidationError("--rule must be 0, 1, 2 or 3; got \(rule)") }
        if out.isEmpty { throw ValidationError("--out needs a file name (or - for standard output)") }
    }

    func run() async throws {
        let zone = try SleepAnalyzeCommand.parseTimeZone(tz)
        let clock = LocalDayClock(timeZone: zone)
        let today = clock.localDateAndHour(of: Int64(Date().timeIntervalSince1970)).date
        let first: LocalDate, lastDay: LocalDate
        if let from {
            first = try Self.date(from, flag: "--from", clock: clock)
            lastDay = try to.map { try Self.date($0, flag: "--to", clock: clock) } ?? today
            guard first <= lastDay else { throw CLIFailure("--from \(first) is after \(to == nil ? "today, " : "--to ")\(lastDay)", status: .usage) }
        } else {
            let days = max(1, Int(try DateArgument.age(last ?? "30d", flag: "--last") / 86_400))
            (first, lastDay) = (clock.adding(days: -(days - 1), to: today), today)
        }
        guard clock.adding(days: Self.longestRange - 1, to: first) >= lastDay else {
            throw CLIFailure("a report covers at most \(Self.longestRange) days; give a shorter range", status: .usage)
        }
        if out != "-", FileManager.default.fileExists(atPath: out), !force {
            throw CLIFailure("\(out) exists; add --force to overwrite it", status: .ioError)
        }
        // Without --to, a night under way after 20:00 (it belongs to tomorrow) is shown too.
        let fetchLast = to == nil ? max(lastDay, clock.adding(days: 1, to: today)) : lastDay
        let (report, name) = try await source.dailySleepReport(first: first, last: fetchLast, zone: zone,
                                                               rule: rule.flatMap { StatisticsRule(rawValue: UInt8($0)) })
        guard !report.days.isEmpty else {
            throw CLIFailure("no sleep records for \(report.watch) from \(first) to \(lastDay); run `tsgateway sleep sync --since 30d\(source.simulate ? " --simulate" : "")` first",
                             status: .failure)
        }
        let shownLast = max(lastDay, report.days.last?.date ?? lastDay)
        let page = SleepReportPage.html(SleepReportInput(report, name: name, first: first, last: shownLast, fallbackZone: zone, generated: Date()))
        guard out != "-" else {
            FileHandle.standardOutput.write(Data(page.utf8))
            return
        }
        do { try PrivateFile.write(page, to: out) } catch { throw CLIFailure.from(error) }
        let nights = report.days.filter { !$0.nightSleeps.isEmpty }.count
        FileHandle.standardError.write(Data("wrote the sleep report of \(first) to \(shownLast) (\(nights) night\(nights == 1 ? "" : "s")) to \(out)\n".utf8))
    }

    static func date(_ text: String, flag: String, clock: LocalDayClock) throws -> LocalDate {
        // A date the calendar moves (2026-02-30 → 03-02) does not exist.
        guard let date = LocalDate(text), clock.adding(days: 0, to: date) == date else {
            throw CLIFailure("\(flag) \"\(text)\" is not a date YYYY-MM-DD", status: .usage)
        }
        return date
    }
}

extension StoredWatchOptions {
    /// The daily reports of [first, last] and the watch's name: from `tsgateway serve` when it runs
    /// and serves the watch (and no --db or --simulate points elsewhere), else from the database.
    func dailySleepReport(first: LocalDate, last: LocalDate, zone: TimeZone, rule: StatisticsRule?) async throws -> (report: DailySleepReport, name: String?) {
        if !simulate, db == nil, let client = await GatewayClient.ifRunning() {
            defer { client.close() }
            if let served = try await WatchAccessor.daemonWatch(client, device: device) {
                let report = try await DaemonConnection.call { try await served.dailySleep(first: first, last: last, timeZone: zone, rule: rule) }
                let name = try? await client.watches().first { $0.id == report.watch }?.name
                return (report, name ?? nil)
            }
        }
        let (store, watchId) = try await open()
        let report = try await store.dailySleepReport(watch: watchId, first: first, last: last, policy: WatchPolicy(timeZone: zone), rule: rule)
        let name = try? await store.watches().first { $0.id == watchId }?.name
        return (report, name ?? nil)
    }
}
