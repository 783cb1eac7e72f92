import TSModels

extension SleepSegment {
    /// The segment's time span [start, end) in Unix seconds (empty when its end is not after its start).
    public var span: Range<Int64> { summary.start..<max(summary.start, summary.end) }
}

extension HeartRateSummary {
    /// The summaries of several spans as one: the lowest and highest rate, the mean weighted by
    /// each span's samples (one decimal); nil when none has samples.
    public init?(combining summaries: [HeartRateSummary]) {
        let summaries = summaries.filter { $0.samples > 0 }
        guard let minimum = summaries.map(\.minimum).min(), let maximum = summaries.map(\.maximum).max() else { return nil }
        let samples = summaries.reduce(0) { $0 + $1.samples }
        let weighted = summaries.reduce(0.0) { $0 + $1.average * Double($1.samples) } / Double(samples)
        self.init(minimum: minimum, average: (weighted * 10).rounded() / 10, maximum: maximum, samples: samples)
    }
}

extension DailySleepModel {
    /// The heart rate of the day's night segments together; nil when none has any.
    public var nightHeartRate: HeartRateSummary? {
        HeartRateSummary(combining: nightSleeps.compactMap(\.heartRate))
    }

    /// The spans of every segment of the day: night segments, daytime segments and valid naps
    /// (which repeat daytime segments).
    public var segmentSpans: [Range<Int64>] {
        (nightSleeps + daytimeSleeps + validNaps).map(\.span)
    }

    /// Sets each segment's `heartRate` to the summary `summaryOf` gives for its span (nil: no samples).
    public mutating func setHeartRate(_ summaryOf: (Range<Int64>) -> HeartRateSummary?) {
        func summarised(_ segments: [SleepSegment]) -> [SleepSegment] {
            segments.map { segment in
                var segment = segment
                segment.heartRate = summaryOf(segment.span)
                return segment
            }
        }
        nightSleeps = summarised(nightSleeps)
        daytimeSleeps = summarised(daytimeSleeps)
        validNaps = summarised(validNaps)
    }
}
