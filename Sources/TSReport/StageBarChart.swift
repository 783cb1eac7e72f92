import Foundation
import TSModels
import TSSleep

/// Per date, the day's counted sleep as one bar stacked by stage (deep at the bottom), with a
/// mark above the bar for each day that had naps.
enum StageBarChart {
    static func svg(dates: [LocalDate], days: [LocalDate: DailySleepModel], naps: (DailySleepModel) -> [SleepSegment], zone: TimeZone) -> String {
        let width = 1000.0, height = 250.0, top = 18.0, bottom = height - 26
        let axis = DayAxis(dates: dates, left: 44, width: width - 44 - 12)
        let longest = days.values.map { day in Double(SleepStage.allCases.reduce(0) { $0 + day.metrics.stageDurations[$1] }) / 3600 }.max() ?? 0
        let values = ValueAxis(low: 0, high: max(8, (longest / 2).rounded(.up) * 2), step: longest > 12 ? 4 : 2)
        let recorded = days.values.filter { $0.dailySummary.duration > 0 }.count
        let label = Markup.escape("Stacked bars of each day's sleep by stage, \(dates.first.map(\.description) ?? "") to \(dates.last.map(\.description) ?? ""): "
            + "\(recorded) of \(dates.count) days with sleep recorded; the day-by-day table below has the numbers.")
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart stage-bars\" viewBox=\"0 0 \(Markup.number(width)) \(Markup.number(height))\" role=\"img\" aria-label=\"\(label)\"><title>\(label)</title>"
        svg += values.grid(left: axis.left, right: axis.left + axis.width, top: top, bottom: bottom) { "\(Int($0))h" }
        let barWidth = min(axis.slot * 0.7, 30)
        for (index, date) in dates.enumerated() {
            guard let day = days[date], day.dailySummary.duration > 0 else { continue }
            let summary = day.dailySummary
            let dayNaps = naps(day)
            var tip = "\(ReportCalendar.long(date)): \(Markup.duration(summary.totalSleepDuration)) asleep ("
                + ReportStyle.stackOrder.map { "\(ReportStyle.word($0)) \(Markup.duration(day.metrics.stageDurations[$0]))" }.joined(separator: ", ") + ")"
            if !dayNaps.isEmpty { tip += ", \(dayNaps.count) nap\(dayNaps.count == 1 ? "" : "s")" }
            svg += "<g class=\"day\" data-date=\"\(date)\"><title>\(Markup.escape(tip))</title>"
            var base = bottom
            for stage in ReportStyle.stackOrder {
                let seconds = day.metrics.stageDurations[stage]
                guard seconds > 0 else { continue }
                let y = values.y(Double(seconds) / 3600, top: top, bottom: bottom)
                let height = bottom - y
                svg += "<rect class=\"stage \(stage.name)\" x=\"\(Markup.number(axis.centre(index) - barWidth / 2))\" y=\"\(Markup.number(base - height))\" width=\"\(Markup.number(barWidth))\" height=\"\(Markup.number(height))\"/>"
                base -= height
            }
            for (order, nap) in dayNaps.enumerated() {
                svg += "<circle class=\"nap-mark\" cx=\"\(Markup.number(axis.centre(index)))\" cy=\"\(Markup.number(base - 6 - Double(order) * 9))\" r=\"3.5\">"
                    + "<title>Nap \(TimeAxis.clock(nap.summary.start, in: zone))–\(TimeAxis.clock(nap.summary.end, in: zone)) (\(Markup.duration(nap.summary.totalSleepDuration)) asleep)</title></circle>"
            }
            svg += "</g>"
        }
        svg += axis.labels(at: bottom)
        return svg + "</svg>"
    }
}
