import Foundation
import TSModels
import TSSleep

/// The human-readable daily table of `tsgateway sleep analyze`.
enum SleepReportFormatter {
    static func ruleName(_ rule: StatisticsRule) -> String {
        switch rule {
        case .withoutNap: "without naps"
        case .withNap: "with naps"
        case .longestNight: "longest night"
        case .longestOnly: "longest only"
        }
    }

    static func table(_ days: [DailySleepModel], rule: StatisticsRule, timeZone: TimeZone) -> String {
        var output = "Sleep by day (rule \(rule.rawValue), \(ruleName(rule)); time zone \(timeZone.identifier))\n"
        guard !days.isEmpty else { return output + "No sleep items in the input.\n" }
        let header = ["date", "asleep", "in bed", "bed", "wake", "deep", "light", "rem", "awake", "wakes", "naps", "quality"]
        var rows: [[String]] = [header]
        for day in days {
            let summary = day.dailySummary
            let counted = summary.duration > 0
            rows.append([
                day.date.description,
                hoursAndMinutes(summary.totalSleepDuration),
                hoursAndMinutes(summary.duration),
                counted ? clock(summary.start, timeZone) : "-",
                day.metrics.finalWakeTime.map { clock($0, timeZone) } ?? "-",
                "\(summary.deepSleepPercentage)%",
                "\(summary.lightSleepPercentage)%",
                "\(summary.remPercentage)%",
                "\(summary.awakePercentage)%",
                "\(day.metrics.numberOfAwakenings)",
                "\(day.validNaps.count)",
                "\(summary.qualityScore)",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - row[column].count)
                return column == 0 ? row[column] + padding : padding + row[column]
            }
            output += cells.joined(separator: "  ") + "\n"
        }
        return output
    }

    static func hoursAndMinutes(_ seconds: Int64) -> String {
        let minutes = max(0, seconds) / 60
        return "\(minutes / 60)h\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)m"
    }

    static func clock(_ instant: Int64, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: TimeInterval(instant)))
        let hour = parts.hour ?? 0
        let minute = parts.minute ?? 0
        return "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
    }

    static func cleaningNote(_ report: SleepInputReport) -> String {
        let parts: [(Int, String)] = [
            (report.droppedEmpty, "zero or negative duration"), (report.droppedOverlong, "longer than 24 h"),
            (report.droppedOutOfRange, "start outside 1970–2099"), (report.droppedDuplicates, "duplicate"),
            (report.droppedCovered, "inside another item"),
        ]
        let reasons = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        var note = "\(report.dropped) of \(report.received) items dropped" + (reasons.isEmpty ? "" : " (\(reasons))")
        if report.trimmedOverlaps > 0 { note += "; \(report.trimmedOverlaps) overlapping items shortened" }
        return note
    }
}
