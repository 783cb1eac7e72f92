import TSModels

/// Sleep efficiency, total sleep over time in bed: the one definition that the daily models,
/// the HTML report, MQTT and the upload outbox use.
public enum SleepEfficiency {
    /// `asleep / inBed`, 0…1 (0 when nothing was in bed): the daily models' `sleepEfficiency`.
    public static func ratio(asleep: Int64, inBed: Int64) -> Double {
        guard inBed > 0 else { return 0 }
        return min(1, max(0, Double(asleep) / Double(inBed)))
    }

    /// The ratio in percent, rounded to the whole percent (halves away from zero): the figure
    /// people see in reports, on MQTT and in uploads.
    public static func percent(asleep: Int64, inBed: Int64) -> Int {
        Int((ratio(asleep: asleep, inBed: inBed) * 100).rounded())
    }

    /// The percent of `segments` together: their sleep over their time in bed.
    public static func percent(of segments: [SleepSegment]) -> Int {
        percent(asleep: segments.reduce(Int64(0)) { $0 + $1.summary.totalSleepDuration },
                inBed: segments.reduce(Int64(0)) { $0 + $1.summary.duration })
    }
}
