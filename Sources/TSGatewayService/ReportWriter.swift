import Foundation
import Logging
import TSFiles
import TSModels
import TSGatewayAPI
import TSReport
import TSSleep
import TSWatchService

/// Writes each served watch's HTML sleep report (`report:` in the configuration) into the
/// configured directory as `sleep-NAME.html`: once at start, every `every`, and after each sync
/// of that watch. Files are replaced atomically, so a web server or a dashboard never reads half
/// a page, and get the configured mode (0600 unless the configuration says otherwise).
public actor ReportWriter {
    let settings: GatewayConfiguration.ReportSettings
    let supervisors: [WatchSupervisor]
    let timeZone: TimeZone
    let logger: Logger
    let now: @Sendable () -> Date

    public init(settings: GatewayConfiguration.ReportSettings, supervisors: [WatchSupervisor], timeZone: TimeZone, logger: Logger,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.supervisors = supervisors
        self.timeZone = timeZone
        self.logger = logger
        self.now = now
    }

    /// The file of a watch: its name when it has one (spaces become dashes), else its address without colons.
    public static func fileName(for entry: GatewayConfiguration.WatchEntry) -> String {
        let word = entry.name.map { $0.replacingOccurrences(of: " ", with: "-") } ?? entry.address.rawValue.replacingOccurrences(of: ":", with: "")
        return "sleep-\(word).html"
    }

    public func path(for entry: GatewayConfiguration.WatchEntry) -> String {
        URL(fileURLWithPath: settings.directory).appendingPathComponent(Self.fileName(for: entry)).path
    }

    /// Writes every report now, then on the schedule and after syncs, until cancelled.
    public func run(events: AsyncStream<GatewayEvent>) async {
        logger.notice("sleep reports: every \(Int(settings.every.timeInterval)) s into \(settings.directory)")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    await self.writeAll()
                    try? await Task.sleep(for: self.settings.every)
                }
            }
            group.addTask {
                for await event in events where event.type == .sleepSynced {
                    await self.write(watch: event.watch)
                }
            }
            await group.waitForAll()
        }
    }

    public func writeAll() async {
        for supervisor in supervisors { await write(supervisor) }
    }

    func write(watch: WatchID) async {
        guard let supervisor = supervisors.first(where: { $0.id == watch }) else { return }
        await write(supervisor)
    }

    /// Writes one watch's report; a failure is logged (without the report's contents) and the next turn tries again.
    @discardableResult
    public func write(_ supervisor: WatchSupervisor) async -> Bool {
        let entry = supervisor.entry, path = path(for: entry)
        do {
            let moment = now()
            let clock = LocalDayClock(timeZone: timeZone)
            let today = clock.localDateAndHour(of: Int64(moment.timeIntervalSince1970)).date
            let first = clock.adding(days: -(settings.days - 1), to: today)
            // A night under way after 20:00 belongs to tomorrow.
            let report = try await supervisor.dailySleep(first: first, last: clock.adding(days: 1, to: today), timeZone: timeZone)
            let input = SleepReportInput(report, name: entry.name, first: first, last: max(today, report.days.last?.date ?? today),
                                         fallbackZone: timeZone, generated: moment)
            try PrivateFile.prepareDirectory(settings.directory, mode: settings.mode)
            try PrivateFile.write(SleepReportPage.html(input), to: path, mode: settings.mode)
            logger.debug("sleep report of \(entry.address) written to \(path)")
            return true
        } catch {
            logger.warning("cannot write the sleep report of \(entry.address) to \(path): \(error)")
            return false
        }
    }
}

extension SleepReportInput {
    /// The page's input from the daily reports `sleep show --json` and DailySleep return.
    public init(_ report: DailySleepReport, name: String?, first: LocalDate, last: LocalDate, fallbackZone: TimeZone, generated: Date?) {
        self.init(watchId: report.watch, watchName: name, timeZone: TimeZone(identifier: report.timeZone) ?? fallbackZone,
                  rule: report.statisticsRule, first: first, last: last, days: report.days,
                  generated: generated.map { Int64($0.timeIntervalSince1970) })
    }
}
