import Foundation
import TSModels
import TSSleep

/// A hypnogram as SVG: one lane per stage (awake on top, deep at the bottom), one block per
/// detail item whose width is proportional to its duration, and a time axis labelled in the
/// report's time zone.
public enum HypnogramChart {
    /// What the chart shows; also its CSS class beside `hypnogram`.
    public enum Kind: String, Sendable {
        case night, nap, daytime
    }

    struct Geometry {
        var width: Double
        var laneHeight: Double
        var top: Double
        let left = 50.0, right = 12.0, laneGap = 3.0, axisHeight = 22.0

        var plotWidth: Double { width - left - right }
        var lanesBottom: Double { top + Double(ReportStyle.laneOrder.count) * (laneHeight + laneGap) - laneGap }
        var height: Double { lanesBottom + axisHeight }

        func laneTop(_ stage: SleepStage) -> Double {
            top + Double(ReportStyle.laneOrder.firstIndex(of: stage) ?? 0) * (laneHeight + laneGap)
        }
    }

    /// The `<svg>` element of `segments` (the night segments of one date, or one nap), for a page.
    /// `heading` is drawn above the lanes (a standalone file has no caption around it).
    public static func svg(_ segments: [SleepSegment], kind: Kind, date: LocalDate, zone: TimeZone,
                           width: Double = 720, heading: String? = nil) -> String {
        let geometry = Geometry(width: width, laneHeight: kind == .night ? 22 : 14, top: heading == nil ? 6 : 30)
        let start = segments.map(\.summary.start).min() ?? 0
        let end = max(segments.map(\.summary.end).max() ?? 0, start + 60)
        let scale = geometry.plotWidth / Double(end - start)
        func x(_ instant: Int64) -> Double { geometry.left + Double(min(max(instant, start), end) - start) * scale }

        let label = Markup.escape(description(segments, kind: kind, date: date, zone: zone, start: start, end: end))
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart hypnogram \(kind.rawValue)\" viewBox=\"0 0 \(Markup.number(width)) \(Markup.number(geometry.height))\""
            + " role=\"img\" aria-label=\"\(label)\" data-date=\"\(date)\"><title>\(label)</title>"
        if let heading {
            svg += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\"/>"
            svg += "<text class=\"heading\" x=\"\(Markup.number(geometry.left))\" y=\"18\">\(Markup.escape(heading))</text>"
        }
        for stage in ReportStyle.laneOrder {
            let top = geometry.laneTop(stage)
            svg += "<rect class=\"lane\" x=\"\(Markup.number(geometry.left))\" y=\"\(Markup.number(top))\" width=\"\(Markup.number(geometry.plotWidth))\" height=\"\(Markup.number(geometry.laneHeight))\"/>"
            svg += "<text x=\"\(Markup.number(geometry.left - 6))\" y=\"\(Markup.number(top + geometry.laneHeight / 2 + 4))\" text-anchor=\"end\">\(ReportStyle.label(stage))</text>"
        }
        let ticks = TimeAxis.ticks(from: start, to: end, in: zone)
        for tick in ticks {
            svg += "<line class=\"grid\" x1=\"\(Markup.number(x(tick.instant)))\" x2=\"\(Markup.number(x(tick.instant)))\" y1=\"\(Markup.number(geometry.top))\" y2=\"\(Markup.number(geometry.lanesBottom))\"/>"
        }

        var trace = ""
        var previousEnd: Int64?
        for segment in segments {
            for item in segment.detailItems where item.end > start && item.start < end {
                let left = x(item.start), right = x(item.end), top = geometry.laneTop(item.stage)
                svg += "<rect class=\"stage \(item.stage.name)\" x=\"\(Markup.number(left))\" y=\"\(Markup.number(top))\""
                    + " width=\"\(Markup.number(right - left))\" height=\"\(Markup.number(geometry.laneHeight))\">"
                    + "<title>\(ReportStyle.label(item.stage)) \(TimeAxis.clock(item.start, in: zone))–\(TimeAxis.clock(item.end, in: zone)) (\(Markup.duration(item.duration)))</title></rect>"
                let middle = Markup.number(top + geometry.laneHeight / 2)
                trace += previousEnd == item.start ? " V\(middle) H\(Markup.number(right))" : " M\(Markup.number(left)) \(middle) H\(Markup.number(right))"
                previousEnd = item.end
            }
        }
        if !trace.isEmpty { svg += "<path class=\"trace\" d=\"\(trace.dropFirst())\"/>" }

        let axisY = geometry.lanesBottom + 3
        svg += "<g class=\"axis\"><line class=\"axis-line\" x1=\"\(Markup.number(geometry.left))\" x2=\"\(Markup.number(geometry.left + geometry.plotWidth))\" y1=\"\(Markup.number(axisY))\" y2=\"\(Markup.number(axisY))\"/>"
        for tick in ticks {
            let position = x(tick.instant)
            let anchor = position - geometry.left < 14 ? "start" : geometry.left + geometry.plotWidth - position < 14 ? "end" : "middle"
            svg += "<text class=\"tick\" x=\"\(Markup.number(position))\" y=\"\(Markup.number(axisY + 15))\" text-anchor=\"\(anchor)\" data-instant=\"\(tick.instant)\">\(tick.label)</text>"
        }
        svg += "</g></svg>"
        return svg
    }

    /// A standalone SVG file of the night of `day` (`sleep show --svg`): its own style sheet,
    /// light and dark, and a heading with the date, times and zone. Nil when the day has no night sleep.
    public static func document(_ day: DailySleepModel, zone: TimeZone) -> String? {
        guard let first = day.nightSleeps.first, let last = day.nightSleeps.last else { return nil }
        let heading = "Night to \(ReportCalendar.long(day.date)) \(day.date.year) · \(TimeAxis.clock(first.summary.start, in: zone))–"
            + "\(TimeAxis.clock(last.summary.end, in: zone)) · \(zone.identifier)"
        let chart = svg(day.nightSleeps, kind: .night, date: day.date, zone: zone, heading: heading)
        // The style goes inside the root element, before everything it styles.
        guard let close = chart.range(of: "</title>") else { return nil }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + chart[..<close.upperBound] + "<style>\(ReportStyle.css)</style>" + chart[close.upperBound...] + "\n"
    }

    /// The text alternative: what the chart shows, in words.
    static func description(_ segments: [SleepSegment], kind: Kind, date: LocalDate, zone: TimeZone, start: Int64, end: Int64) -> String {
        var stages = StageDurations()
        for segment in segments {
            for item in segment.detailItems { stages[item.stage] += item.duration }
        }
        let asleep = stages.light + stages.deep + stages.rem
        let what = switch kind {
        case .night: "Hypnogram of the night to \(ReportCalendar.long(date)) \(date.year)"
        case .nap: "Hypnogram of a nap on \(ReportCalendar.long(date)) \(date.year)"
        case .daytime: "Hypnogram of daytime sleep on \(ReportCalendar.long(date)) \(date.year)"
        }
        var text = "\(what), \(TimeAxis.clock(start, in: zone)) to \(TimeAxis.clock(end, in: zone)) (\(zone.identifier)): \(Markup.duration(asleep)) asleep; "
            + ReportStyle.laneOrder.map { "\(ReportStyle.word($0)) \(Markup.duration(stages[$0]))" }.joined(separator: ", ")
        let offsets = TimeAxis.offsetChanges(from: start, to: end, in: zone)
        if !offsets.isEmpty { text += "; the clocks changed during it (\(offsets.joined(separator: " to ")))" }
        return text
    }
}
