import TSModels

extension SleepSegment {
    /// The segment's time span [start, end) in Unix seconds (empty when its end is not after its start).
    public var span: Range<Int64> { summary.start..<max(summary.start, summary.end) }
}

extension DailySleepModel {
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
