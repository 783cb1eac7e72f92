import Foundation
import Logging
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
        let word = entry.name.map { $0.replacingOccurrences(of: " ", with: "-") } ?? entry.address.replacingOccurrences(of: ":", with: "")
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

    func write(watch: String) async {
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
            try ReportFile.prepareDirectory(settings.directory, mode: settings.mode)
            try ReportFile.write(SleepReportPage.html(input), to: path, mode: settings.mode)
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

/// A file that is replaced atomically with a given mode: written to a temporary file beside it,
/// flushed, then renamed over it. The mode is set explicitly, whatever the umask.
public enum ReportFile {
    public static func write(_ text: String, to path: String, mode: Int) throws(ReportFileError) {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReportFileError(path: path, errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            throw ReportFileError(path: path, reason: "\((error as NSError).localizedDescription)", category: .storage)
        }
        guard fchmod(descriptor, mode_t(mode)) == 0, fsync(descriptor) == 0 else { throw ReportFileError(path: path, errno: errno) }
        try? handle.close()
        guard rename(temporary, path) == 0 else { throw ReportFileError(path: path, errno: errno) }
        renamed = true
    }

    /// Creates `directory` when it is missing: 0700, or 0750 / 0755 when the files are for the group / everyone.
    public static func prepareDirectory(_ directory: String, mode fileMode: Int) throws(ReportFileError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ReportFileError(path: directory, reason: "it is a file, not a directory", category: .invalidInput) }
            return
        }
        let mode = fileMode & 0o004 != 0 ? 0o755 : fileMode & 0o040 != 0 ? 0o750 : 0o700
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ReportFileError(path: directory, reason: "cannot create it (\((error as NSError).localizedDescription))", category: .storage)
        }
        guard chmod(directory, mode_t(mode)) == 0 else { throw ReportFileError(path: directory, errno: errno) }
    }
}

public struct ReportFileError: CategorizedError, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var category: ErrorCategory

    init(path: String, reason: String, category: ErrorCategory) {
        self.path = path
        self.reason = reason
        self.category = category
    }

    init(path: String, errno code: Int32) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        self.init(path: path, reason: "\(String(cString: strerror(code))); check that \(directory) exists and that this user may write there",
                  category: code == EACCES || code == EPERM || code == EROFS ? .permission : .storage)
    }

    public var description: String { "cannot write \(path): \(reason)" }
}
