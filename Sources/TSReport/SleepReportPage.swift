import Foundation
import TSModels
import TSSleep

/// What a report is drawn from: the daily models of one watch over a range of dates.
public struct SleepReportInput: Sendable {
    public var watchId: WatchID
    public var watchName: String?
    public var timeZone: TimeZone
    public var rule: StatisticsRule
    /// The range shown; dates without sleep are gaps in the charts.
    public var first: LocalDate
    public var last: LocalDate
    public var days: [DailySleepModel]
    /// When the report was made (Unix seconds), stated in its footer; nil leaves it out.
    public var generated: Int64?

    public init(watchId: WatchID, watchName: String? = nil, timeZone: TimeZone, rule: StatisticsRule,
                first: LocalDate, last: LocalDate, days: [DailySleepModel], generated: Int64? = nil) {
        self.watchId = watchId
        self.watchName = watchName
        self.timeZone = timeZone
        self.rule = rule
        self.first = first
        self.last = last
        self.days = days
        self.generated = generated
    }
}

/// The sleep report as one self-contained HTML page: inline CSS and SVG only, no script, and a
/// Content-Security-Policy that lets the page load nothing else, so it opens offline and the
/// same anywhere (a file, a Home Assistant panel, a small web server).
///
/// From top to bottom: the watch, range, statistics rule and time zone; a legend; the averages;
/// the days as bars stacked by stage with naps marked; trends of total sleep, efficiency,
/// quality and, when the nights carry heart rate, night heart rate, each with its average; one
/// hypnogram per night (newest first) with that day's naps beside it; the day-by-day table.
public enum SleepReportPage {
    public static func html(_ input: SleepReportInput) -> String {
        let zone = input.timeZone
        let dates = ReportCalendar.dates(from: input.first, through: input.last)
        let days = Dictionary(input.days.filter { $0.date >= input.first && $0.date <= input.last }.map { ($0.date, $0) },
                              uniquingKeysWith: { _, latest in latest })
        let recorded = dates.compactMap { days[$0] }.filter { $0.dailySummary.duration > 0 }
        let naps = { (day: DailySleepModel) in countedDaytime(day, rule: input.rule) }
        let watch = input.watchName.map { "\($0) (\(input.watchId))" } ?? input.watchId.rawValue
        let title = "Sleep of \(input.watchName ?? input.watchId.rawValue), \(input.first) to \(input.last)"

        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
            <meta name="generator" content="tsgateway">
            <title>\(Markup.escape(title))</title>
            <style>
            \(ReportStyle.css)
            \(ReportStyle.pageCSS)
            </style>
            </head>
            <body>
            <main>
            <header>
            <h1>\(Markup.escape(title))</h1>
            <p class="facts">Watch <strong>\(Markup.escape(watch))</strong> · \(dates.count) day\(dates.count == 1 ? "" : "s"), \(recorded.count) with sleep recorded</p>
            <p class="facts">Statistics rule <strong>\(input.rule.rawValue)</strong>, \(Markup.escape(ruleDescription(input.rule)))</p>
            <p class="facts">Times in <strong>\(Markup.escape(zone.identifier))</strong>; each date runs from 20:00 the evening before to 20:00, so a night belongs to the date it ends on.</p>
            <ul class="legend" aria-label="Legend">
            """
        for stage in ReportStyle.laneOrder {
            page += "<li><span class=\"swatch \(stage.name)\"></span>\(ReportStyle.label(stage))</li>"
        }
        page += "<li><span class=\"swatch nap\"></span>Nap</li><li>- - - average</li></ul>\n</header>\n"

        guard !recorded.isEmpty || days.values.contains(where: { !$0.nightSleeps.isEmpty }) else {
            page += "<p>No sleep was recorded from \(input.first) to \(input.last). Sync the watch (<code>tsgateway sleep sync</code>) and make the report again.</p>\n"
            return page + footer(input) + "</main>\n</body>\n</html>\n"
        }

        let series = trendSeries(recorded)
        page += "<section class=\"averages\" aria-label=\"Averages\">"
        for trend in series {
            guard let average = trend.average else { continue }
            page += "<div class=\"average-tile\"><div class=\"value\">\(Markup.escape(trend.format(average)))</div><div class=\"name\">average \(Markup.escape(trend.title.lowercased()))</div></div>"
        }
        page += "</section>\n"

        page += "<h2>Sleep by day</h2>\n<div class=\"panel\">\(StageBarChart.svg(dates: dates, days: days, naps: naps, zone: zone))</div>\n"
        page += "<h2>Trends</h2>\n<div class=\"trends\">"
        for trend in series {
            let caption = trend.title + (trend.note.map { " (\($0))" } ?? "")
            page += "<figure class=\"panel\"><figcaption>\(Markup.escape(caption))</figcaption>\(TrendChart.svg(trend, dates: dates))</figure>"
        }
        page += "</div>\n"

        page += "<h2>Nights</h2>\n<div class=\"nights\">\n"
        for date in dates.reversed() {
            guard let day = days[date], !day.nightSleeps.isEmpty || !naps(day).isEmpty else { continue }
            page += nightCard(day, naps: naps(day), rule: input.rule, zone: zone) + "\n"
        }
        page += "</div>\n"
        page += dayTable(dates: dates, days: days, naps: naps, zone: zone)
        return page + footer(input) + "</main>\n</body>\n</html>\n"
    }

    /// The daytime segments a rule counts: valid naps (rules 1 and 2), the day's one segment when
    /// rule 3 picked a daytime one.
    static func countedDaytime(_ day: DailySleepModel, rule: StatisticsRule) -> [SleepSegment] {
        rule == .longestOnly ? day.daytimeSleeps : day.validNaps
    }

    public static func ruleDescription(_ rule: StatisticsRule) -> String {
        switch rule {
        case .withoutNap: "without naps: all sleep from 20:00 to 12:00 is night sleep; daytime sleep is not counted"
        case .withNap: "with naps: night from 20:00 to 09:00; naps of 20 minutes to 3 hours between 09:00 and 20:00 count too"
        case .longestNight: "longest night: the longest night segment between 20:00 and 08:00, plus naps of 20 minutes to 3 hours"
        case .longestOnly: "longest only: the day's longest segment, night or daytime, and nothing else"
        }
    }

    static func trendSeries(_ recorded: [DailySleepModel]) -> [TrendSeries] {
        var series = [
            TrendSeries(key: "total", title: "Total sleep", unitSteps: [0.5, 1, 2, 4], floor: 0, ceiling: 24,
                        format: { Markup.hoursShort(Int64(($0 * 3600).rounded())) },
                        points: recorded.map { TrendPoint(date: $0.date, value: Double($0.dailySummary.totalSleepDuration) / 3600) }),
            TrendSeries(key: "efficiency", title: "Sleep efficiency", unitSteps: [2, 5, 10, 20], floor: 0, ceiling: 100,
                        format: { "\(Int($0.rounded()))%" },
                        points: recorded.map { TrendPoint(date: $0.date, value: $0.metrics.sleepEfficiency * 100) }),
            TrendSeries(key: "quality", title: "Sleep quality", unitSteps: [5, 10, 20, 25], floor: 0, ceiling: 100,
                        format: { "\(Int($0.rounded()))" },
                        points: recorded.map { TrendPoint(date: $0.date, value: Double($0.dailySummary.qualityScore)) }),
        ]
        let heartRates = recorded.compactMap { day in
            day.nightHeartRate.map { TrendPoint(date: day.date, value: $0.average, low: Double($0.minimum), high: Double($0.maximum)) }
        }
        if !heartRates.isEmpty {
            series.append(TrendSeries(key: "heart-rate", title: "Night heart rate", unitSteps: [5, 10, 20, 40], floor: 0, ceiling: nil,
                                      format: { "\(Int($0.rounded())) bpm" }, axisFormat: { "\(Int($0.rounded()))" },
                                      note: "beats per minute; the line joins the nights' averages, the bars span each night's lowest to highest",
                                      points: heartRates))
        }
        return series
    }

    static func nightCard(_ day: DailySleepModel, naps: [SleepSegment], rule: StatisticsRule, zone: TimeZone) -> String {
        var card = "<figure class=\"panel night-card\" id=\"night-\(day.date)\">"
        if let first = day.nightSleeps.first, let last = day.nightSleeps.last {
            let asleep = day.nightSleeps.map(\.summary.totalSleepDuration).reduce(0, +)
            let inBed = day.nightSleeps.map(\.summary.duration).reduce(0, +)
            var facts = "\(TimeAxis.clock(first.summary.start, in: zone))–\(TimeAxis.clock(last.summary.end, in: zone)) · \(Markup.duration(asleep)) asleep of \(Markup.duration(inBed)) in bed"
            facts += " · quality \(day.dailySummary.qualityScore)"
            if let heart = day.nightHeartRate { facts += " · heart rate \(heart.minimum)–\(heart.maximum) bpm, average \(Int(heart.average.rounded()))" }
            let offsets = TimeAxis.offsetChanges(from: first.summary.start, to: last.summary.end, in: zone)
            if !offsets.isEmpty { facts += " · clocks changed: \(offsets.joined(separator: " → "))" }
            card += "<figcaption><h3>Night to \(ReportCalendar.long(day.date))</h3>\(Markup.escape(facts))</figcaption>"
            card += HypnogramChart.svg(day.nightSleeps, kind: .night, date: day.date, zone: zone, width: 520)
        } else {
            card += "<figcaption><h3>\(ReportCalendar.long(day.date))</h3>No night sleep recorded</figcaption>"
        }
        if !naps.isEmpty {
            let kind: HypnogramChart.Kind = rule == .longestOnly ? .daytime : .nap
            card += "<div class=\"naps\">"
            for nap in naps {
                let name = kind == .nap ? "Nap" : "Daytime sleep"
                let facts = "\(name) \(TimeAxis.clock(nap.summary.start, in: zone))–\(TimeAxis.clock(nap.summary.end, in: zone)) · \(Markup.duration(nap.summary.totalSleepDuration)) asleep"
                card += "<figure><figcaption>\(Markup.escape(facts))</figcaption>\(HypnogramChart.svg([nap], kind: kind, date: day.date, zone: zone, width: 340))</figure>"
            }
            card += "</div>"
        }
        return card + "</figure>"
    }

    static func dayTable(dates: [LocalDate], days: [LocalDate: DailySleepModel], naps: (DailySleepModel) -> [SleepSegment], zone: TimeZone) -> String {
        let withHeartRate = days.values.contains { $0.nightHeartRate != nil }
        var table = "<h2>Day by day</h2>\n<div class=\"table-wrap\"><table>\n<thead><tr><th scope=\"col\">date</th><th scope=\"col\">bed</th><th scope=\"col\">wake</th>"
            + "<th scope=\"col\">asleep</th><th scope=\"col\">in bed</th><th scope=\"col\">efficiency</th><th scope=\"col\">deep</th><th scope=\"col\">light</th>"
            + "<th scope=\"col\">REM</th><th scope=\"col\">awake</th><th scope=\"col\">wakes</th><th scope=\"col\">naps</th><th scope=\"col\">quality</th>"
            + (withHeartRate ? "<th scope=\"col\">heart rate</th>" : "") + "</tr></thead>\n<tbody>\n"
        for date in dates.reversed() {
            guard let day = days[date], day.dailySummary.duration > 0 else { continue }
            let summary = day.dailySummary
            var cells = [
                ReportCalendar.long(date), TimeAxis.clock(summary.start, in: zone), day.metrics.finalWakeTime.map { TimeAxis.clock($0, in: zone) } ?? "–",
                Markup.hoursShort(summary.totalSleepDuration), Markup.hoursShort(summary.duration), "\(SleepEfficiency.percent(asleep: day.metrics.totalSleepDuration, inBed: day.metrics.timeInBed))%",
                "\(summary.deepSleepPercentage)%", "\(summary.lightSleepPercentage)%", "\(summary.remPercentage)%", "\(summary.awakePercentage)%",
                "\(day.metrics.numberOfAwakenings)", "\(naps(day).count)", "\(summary.qualityScore)",
            ]
            if withHeartRate { cells.append(day.nightHeartRate.map { "\($0.minimum)–\($0.maximum) (\(Int($0.average.rounded())))" } ?? "–") }
            table += "<tr><th scope=\"row\">\(cells[0])</th>" + cells.dropFirst().map { "<td>\(Markup.escape($0))</td>" }.joined() + "</tr>\n"
        }
        return table + "</tbody></table></div>\n"
    }

    static func footer(_ input: SleepReportInput) -> String {
        var text = "Made by tsgateway from the records synced from the watch"
        if let generated = input.generated {
            let day = TimeAxis.localDate(of: generated, in: input.timeZone)
            text += " on \(day) at \(TimeAxis.clock(generated, in: input.timeZone)) (\(input.timeZone.identifier))"
        }
        return "<footer>\(Markup.escape(text)). This page holds health data; it loads nothing from the network.</footer>\n"
    }
}
