import ArgumentParser
import Foundation
import TSModels
import TSSleep

struct SleepAnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Turn raw sleep items from a JSON or CSV file into daily sleep reports.",
        discussion: """
            Items are grouped by belonging date (20:00 local time starts the next date) and \
            analysed with one of the four TopStep statistics rules. The input formats are \
            described in docs/cli.md under "Sleep analysis input"; the rules and the --json schema \
            in protocol-spec/sleep-statistics.md.
            """
    )

    @Option(name: .long, help: ArgumentHelp("JSON or CSV file of raw sleep items; - reads standard input.", valueName: "file"))
    var input: String

    @Option(name: .long, help: ArgumentHelp(
        "Statistics rule: 0 without naps, 1 with naps, 2 longest night, 3 longest only.", valueName: "n"))
    var rule: String = "1"

    @Option(name: .long, help: ArgumentHelp("IANA time zone for the 20:00 boundary and the windows (default: the system zone).", valueName: "zone"))
    var tz: String?

    @Flag(name: .long, help: "Print the full daily models as JSON instead of a table.")
    var json = false

    func run() throws {
        let statisticsRule = try Self.parseRule(rule)
        let timeZone = try Self.parseTimeZone(tz)
        let (items, _) = try SleepInputReader.read(path: input)
        let (days, report) = SleepProcessor.analyse(items, rule: statisticsRule, timeZone: timeZone)
        if report.dropped > 0 || report.trimmedOverlaps > 0 {
            FileHandle.standardError.write(Data("tsgateway: note: \(SleepReportFormatter.cleaningNote(report))\n".utf8))
        }
        if json {
            let document = SleepAnalysisDocument(statisticsRule: statisticsRule, timeZone: timeZone.identifier, input: report, days: days)
            do {
                print(String(decoding: try JSONCoding.encoder(pretty: true).encode(document), as: UTF8.self))
            } catch {
                throw CLIFailure("cannot encode the report as JSON: \(error)", status: .software)
            }
        } else {
            print(SleepReportFormatter.table(days, rule: statisticsRule, timeZone: timeZone), terminator: "")
        }
    }

    static func parseRule(_ text: String) throws(CLIFailure) -> StatisticsRule {
        let names: [String: StatisticsRule] = [
            "without-nap": .withoutNap, "with-nap": .withNap, "longest-night": .longestNight, "longest-only": .longestOnly,
        ]
        if let number = UInt8(text), let rule = StatisticsRule(rawValue: number) { return rule }
        if let rule = names[text.lowercased()] { return rule }
        throw CLIFailure(
            "unknown statistics rule \"\(text)\"; use 0 (without naps), 1 (with naps), 2 (longest night) or 3 (longest only)",
            status: .usage)
    }

    static func parseTimeZone(_ identifier: String?) throws(CLIFailure) -> TimeZone {
        guard let identifier else { return TimeZone.current }
        guard !identifier.isEmpty, let zone = TimeZone(identifier: identifier) else {
            throw CLIFailure("unknown time zone \"\(identifier)\"; use an IANA name such as Europe/Berlin or America/New_York", status: .usage)
        }
        return zone
    }
}

/// The `--json` document (schema in protocol-spec/sleep-statistics.md, "JSON shape").
struct SleepAnalysisDocument: Encodable {
    var schemaVersion = 1
    var statisticsRule: StatisticsRule
    var timeZone: String
    var input: SleepInputReport
    var days: [DailySleepModel]
}
