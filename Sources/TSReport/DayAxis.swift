import TSSleep

/// One slot per date of the report's range, left to right, shared by the stage bars and the
/// trends so that a date sits at the same place in each.
struct DayAxis {
    let dates: [LocalDate]
    let left: Double
    let width: Double

    var slot: Double { width / Double(max(dates.count, 1)) }

    func centre(_ index: Int) -> Double { left + (Double(index) + 0.5) * slot }

    /// As many labels as fit (about 64 units each): every date in a short range, every n-th in a long one.
    var labelEvery: Int {
        let fitting = max(1, Int(width / 64))
        return max(1, Int((Double(dates.count) / Double(fitting)).rounded(.up)))
    }

    func label(_ index: Int) -> String {
        labelEvery == 1 && dates.count <= 10 ? "\(ReportCalendar.weekday(dates[index])) \(dates[index].day)" : ReportCalendar.short(dates[index])
    }

    /// The axis labels under a plot whose bottom is at `y`.
    func labels(at y: Double) -> String {
        var svg = "<g class=\"axis\">"
        for index in dates.indices where index % labelEvery == 0 {
            svg += "<text x=\"\(Markup.number(centre(index)))\" y=\"\(Markup.number(y + 16))\" text-anchor=\"middle\">\(label(index))</text>"
        }
        return svg + "</g>"
    }
}

/// Horizontal grid lines at round values, labelled on the left.
struct ValueAxis {
    let low: Double
    let high: Double
    let step: Double

    /// A range with round ends around `values` (widened by `padding` of the span), using the
    /// smallest of `steps` that needs at most `lines` intervals.
    init(values: [Double], steps: [Double], lines: Int = 5, floor minimum: Double? = nil, ceiling maximum: Double? = nil, padding: Double = 0.1) {
        var low = values.min() ?? 0, high = values.max() ?? 1
        let pad = Swift.max((high - low) * padding, steps.first ?? 1)
        low -= pad
        high += pad
        if let minimum { low = Swift.max(low, minimum) }
        if let maximum { high = Swift.min(high, maximum) }
        let step = steps.first { ((high - low) / $0).rounded(.up) <= Double(lines) } ?? steps.last ?? 1
        self.low = (low / step).rounded(.down) * step
        self.high = Swift.max((high / step).rounded(.up) * step, self.low + step)
        self.step = step
    }

    init(low: Double, high: Double, step: Double) {
        self.low = low
        self.high = high
        self.step = step
    }

    var values: [Double] {
        let count = Int(((high - low) / step).rounded())
        return (0...count).map { low + Double($0) * step }
    }

    /// The y of `value` in a plot from `top` to `bottom`.
    func y(_ value: Double, top: Double, bottom: Double) -> Double {
        bottom - (value - low) / (high - low) * (bottom - top)
    }

    func grid(left: Double, right: Double, top: Double, bottom: Double, label: (Double) -> String) -> String {
        var svg = "<g class=\"value-axis\">"
        for value in values {
            let y = Markup.number(self.y(value, top: top, bottom: bottom))
            svg += "<line class=\"grid\" x1=\"\(Markup.number(left))\" x2=\"\(Markup.number(right))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            svg += "<text x=\"\(Markup.number(left - 6))\" y=\"\(y)\" dy=\"4\" text-anchor=\"end\">\(Markup.escape(label(value)))</text>"
        }
        return svg + "</g>"
    }
}
