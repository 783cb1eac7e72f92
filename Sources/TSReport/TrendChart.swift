import TSSleep

/// One value per date with an optional range (a night's lowest and highest heart rate).
struct TrendPoint: Sendable, Hashable {
    var date: LocalDate
    var value: Double
    var low: Double?
    var high: Double?
}

/// A measure over the report's dates: what it is, how its values read, and the points.
struct TrendSeries {
    /// CSS class of the line and points, also what tests look for.
    var key: String
    var title: String
    var unitSteps: [Double]
    var floor: Double?
    var ceiling: Double?
    var format: (Double) -> String
    /// The value axis's labels, when they leave out a unit the caption names.
    var axisFormat: ((Double) -> String)? = nil
    /// Said under the chart's name, e.g. the unit of the axis.
    var note: String? = nil
    var points: [TrendPoint]

    var average: Double? {
        points.isEmpty ? nil : points.map(\.value).reduce(0, +) / Double(points.count)
    }
}

/// A line over the dates with a point per date that has a value (the line breaks over dates
/// without one), the range as a vertical whisker when there is one, and the average dashed.
enum TrendChart {
    static func svg(_ series: TrendSeries, dates: [LocalDate]) -> String {
        let width = 500.0, height = 210.0, top = 14.0, bottom = height - 26
        let axis = DayAxis(dates: dates, left: 48, width: width - 48 - 12)
        let index = Dictionary(dates.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let points = series.points.filter { index[$0.date] != nil }.sorted { $0.date < $1.date }
        let values = ValueAxis(values: points.flatMap { [$0.value] + [$0.low, $0.high].compactMap { $0 } }, steps: series.unitSteps,
                               floor: series.floor, ceiling: series.ceiling)
        func y(_ value: Double) -> Double { values.y(value, top: top, bottom: bottom) }

        var label = "\(series.title) per day, \(dates.first.map(\.description) ?? "") to \(dates.last.map(\.description) ?? ""): "
        if let average = series.average, let low = points.map(\.value).min(), let high = points.map(\.value).max() {
            label += "average \(series.format(average)), lowest \(series.format(low)), highest \(series.format(high)), over \(points.count) of \(dates.count) days"
        } else {
            label += "no values"
        }
        let escaped = Markup.escape(label)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart trend \(series.key)\" viewBox=\"0 0 \(Markup.number(width)) \(Markup.number(height))\" role=\"img\" aria-label=\"\(escaped)\"><title>\(escaped)</title>"
        svg += values.grid(left: axis.left, right: axis.left + axis.width, top: top, bottom: bottom, label: series.axisFormat ?? series.format)

        var path = ""
        var previous: Int?
        for point in points {
            guard let position = index[point.date] else { continue }
            let command = previous == position - 1 ? "L" : "M"
            path += " \(command)\(Markup.number(axis.centre(position))) \(Markup.number(y(point.value)))"
            previous = position
        }
        if !path.isEmpty { svg += "<path class=\"series \(series.key)\" d=\"\(path.dropFirst())\"/>" }
        for point in points {
            guard let position = index[point.date], let low = point.low, let high = point.high else { continue }
            let x = Markup.number(axis.centre(position))
            svg += "<line class=\"range \(series.key)\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(Markup.number(y(low)))\" y2=\"\(Markup.number(y(high)))\"/>"
        }
        for point in points {
            guard let position = index[point.date] else { continue }
            var tip = "\(ReportCalendar.long(point.date)): \(series.format(point.value))"
            if let low = point.low, let high = point.high { tip += " (\(series.format(low))–\(series.format(high)))" }
            svg += "<circle class=\"point \(series.key)\" cx=\"\(Markup.number(axis.centre(position)))\" cy=\"\(Markup.number(y(point.value)))\" r=\"3.5\"><title>\(Markup.escape(tip))</title></circle>"
        }
        if let average = series.average {
            let level = Markup.number(y(average))
            svg += "<line class=\"average\" x1=\"\(Markup.number(axis.left))\" x2=\"\(Markup.number(axis.left + axis.width))\" y1=\"\(level)\" y2=\"\(level)\"/>"
            svg += "<text class=\"average-label\" x=\"\(Markup.number(axis.left + axis.width - 2))\" y=\"\(level)\" dy=\"-5\" text-anchor=\"end\">average \(Markup.escape(series.format(average)))</text>"
        }
        svg += axis.labels(at: bottom)
        return svg + "</svg>"
    }
}
