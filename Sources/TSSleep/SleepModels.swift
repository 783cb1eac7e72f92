import TSModels

// The daily model and its parts. Every type here is a value type whose Codable form is the
// stable JSON schema documented in protocol-spec/sleep-statistics.md ("JSON shape"); property
// names are the JSON keys, so renaming one is a schema change.

/// A calendar date in the user's time zone, encoded as `"YYYY-MM-DD"`.
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// The date `days` days after 1970-01-01 in the proleptic Gregorian calendar (negative: before).
    public init(daysSince1970 days: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.init(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (negative: before).
    public var daysSince1970: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension LocalDate: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not a YYYY-MM-DD date")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Whether a segment is night sleep or a daytime nap. Encoded as `"night"` / `"daytime"`.
public enum SleepPeriodType: String, Sendable, Hashable, Codable, CaseIterable {
    case night
    case daytime
}

/// Statistics over a stretch of sleep: one segment, or the counted segments of a day.
/// All times are Unix seconds, all durations seconds.
public struct SleepSummary: Sendable, Hashable, Codable {
    public var start: Int64
    public var end: Int64
    /// Time in bed: `end - start` for a segment; the sum of the counted segments' durations for a day.
    public var duration: Int64
    /// Light + deep + REM.
    public var totalSleepDuration: Int64
    public var awakeDuration: Int64
    public var lightSleepDuration: Int64
    public var deepSleepDuration: Int64
    public var remDuration: Int64
    /// Shares of the recorded stage time (awake + light + deep + REM), whole percent, summing to
    /// exactly 100 when anything was recorded (largest-remainder rounding), else all 0.
    public var awakePercentage: UInt8
    public var lightSleepPercentage: UInt8
    public var deepSleepPercentage: UInt8
    public var remPercentage: UInt8
    /// Episodes: runs of contiguous items of one stage.
    public var awakeCount: UInt16
    public var lightSleepCount: UInt16
    public var deepSleepCount: UInt16
    public var remCount: UInt16
    /// 0…100, see `SleepQuality.score`.
    public var qualityScore: UInt8

    public init(
        start: Int64, end: Int64, duration: Int64, totalSleepDuration: Int64,
        awakeDuration: Int64, lightSleepDuration: Int64, deepSleepDuration: Int64, remDuration: Int64,
        awakePercentage: UInt8, lightSleepPercentage: UInt8, deepSleepPercentage: UInt8, remPercentage: UInt8,
        awakeCount: UInt16, lightSleepCount: UInt16, deepSleepCount: UInt16, remCount: UInt16,
        qualityScore: UInt8
    ) {
        self.start = start
        self.end = end
        self.duration = duration
        self.totalSleepDuration = totalSleepDuration
        self.awakeDuration = awakeDuration
        self.lightSleepDuration = lightSleepDuration
        self.deepSleepDuration = deepSleepDuration
        self.remDuration = remDuration
        self.awakePercentage = awakePercentage
        self.lightSleepPercentage = lightSleepPercentage
        self.deepSleepPercentage = deepSleepPercentage
        self.remPercentage = remPercentage
        self.awakeCount = awakeCount
        self.lightSleepCount = lightSleepCount
        self.deepSleepCount = deepSleepCount
        self.remCount = remCount
        self.qualityScore = qualityScore
    }

    /// The summary of a day where nothing counts: zero durations at `instant`.
    public static func empty(at instant: Int64) -> SleepSummary {
        SleepSummary(
            start: instant, end: instant, duration: 0, totalSleepDuration: 0,
            awakeDuration: 0, lightSleepDuration: 0, deepSleepDuration: 0, remDuration: 0,
            awakePercentage: 0, lightSleepPercentage: 0, deepSleepPercentage: 0, remPercentage: 0,
            awakeCount: 0, lightSleepCount: 0, deepSleepCount: 0, remCount: 0, qualityScore: 0)
    }
}

/// One value per sleep stage, keyed by stage name in JSON (`awake`, `light`, `deep`, `rem`).
public struct PerStage<Value: Sendable & Hashable & Codable & AdditiveArithmetic>: Sendable, Hashable, Codable {
    public var awake: Value
    public var light: Value
    public var deep: Value
    public var rem: Value

    public init(awake: Value = .zero, light: Value = .zero, deep: Value = .zero, rem: Value = .zero) {
        self.awake = awake
        self.light = light
        self.deep = deep
        self.rem = rem
    }

    public subscript(stage: SleepStage) -> Value {
        get {
            switch stage {
            case .awake: awake
            case .light: light
            case .deep: deep
            case .rem: rem
            }
        }
        set {
            switch stage {
            case .awake: awake = newValue
            case .light: light = newValue
            case .deep: deep = newValue
            case .rem: rem = newValue
            }
        }
    }
}

/// Seconds per stage.
public typealias StageDurations = PerStage<Int64>

/// Metrics other sleep products report, computed from the same segments.
public struct SleepMetrics: Sendable, Hashable, Codable {
    /// Sum of the segments' `end - start`.
    public var timeInBed: Int64
    public var totalSleepDuration: Int64
    /// totalSleepDuration / timeInBed, 0…1 (0 when timeInBed is 0).
    public var sleepEfficiency: Double
    /// From the first segment's start to its first non-awake item.
    public var sleepOnsetLatency: Int64
    /// End of the last counted night segment (of the last counted segment when none is night);
    /// null when nothing is counted.
    public var finalWakeTime: Int64?
    /// Awake episodes after sleep onset, summed over the segments.
    public var numberOfAwakenings: Int
    public var stageDurations: StageDurations

    public init(
        timeInBed: Int64, totalSleepDuration: Int64, sleepEfficiency: Double, sleepOnsetLatency: Int64,
        finalWakeTime: Int64?, numberOfAwakenings: Int, stageDurations: StageDurations
    ) {
        self.timeInBed = timeInBed
        self.totalSleepDuration = totalSleepDuration
        self.sleepEfficiency = sleepEfficiency
        self.sleepOnsetLatency = sleepOnsetLatency
        self.finalWakeTime = finalWakeTime
        self.numberOfAwakenings = numberOfAwakenings
        self.stageDurations = stageDurations
    }
}

/// A fixed-epoch stage array: `stages[i]` describes `[start + i*epochSeconds, start + (i+1)*epochSeconds)`
/// with 0 awake, 1 light, 2 deep, 3 REM, -1 no data.
public struct SleepEpochs: Sendable, Hashable, Codable {
    public var start: Int64
    public var epochSeconds: Int64
    public var stages: [Int8]

    public init(start: Int64, epochSeconds: Int64, stages: [Int8]) {
        self.start = start
        self.epochSeconds = epochSeconds
        self.stages = stages
    }
}

/// One continuous stretch of sleep: no awake-or-unrecorded run of 30 minutes or more inside it,
/// no trailing awake items.
public struct SleepSegment: Sendable, Hashable, Codable {
    public var periodType: SleepPeriodType
    public var summary: SleepSummary
    public var metrics: SleepMetrics
    /// In chronological order.
    public var detailItems: [SleepItem]
    public var epochs: SleepEpochs
    /// The heart rate the gateway received during the segment; nil when it has no samples
    /// from it (the engine never sets it: the store's report adds it).
    public var heartRate: HeartRateSummary?

    public init(periodType: SleepPeriodType, summary: SleepSummary, metrics: SleepMetrics, detailItems: [SleepItem], epochs: SleepEpochs,
                heartRate: HeartRateSummary? = nil) {
        self.periodType = periodType
        self.summary = summary
        self.metrics = metrics
        self.detailItems = detailItems
        self.epochs = epochs
        self.heartRate = heartRate
    }
}

/// Everything one belonging date holds under one statistics rule.
public struct DailySleepModel: Sendable, Hashable, Codable {
    /// The belonging date (20:00 boundary) in the analysis time zone.
    public var date: LocalDate
    /// Unix time of 00:00 local on `date` (the first instant of the day if midnight is skipped).
    public var belongingDate: Int64
    public var statisticsRule: StatisticsRule
    /// Over the counted segments only (see the rule's strategy).
    public var dailySummary: SleepSummary
    public var metrics: SleepMetrics
    /// The cleaned input items whose start falls in this date's 20:00–20:00 span, chronological.
    public var rawItems: [SleepItem]
    public var nightSleeps: [SleepSegment]
    public var daytimeSleeps: [SleepSegment]
    /// The daytime segments with 20 min < duration ≤ 3 h (rules 1 and 2; always empty for 0 and 3).
    public var validNaps: [SleepSegment]

    public init(
        date: LocalDate, belongingDate: Int64, statisticsRule: StatisticsRule, dailySummary: SleepSummary,
        metrics: SleepMetrics, rawItems: [SleepItem], nightSleeps: [SleepSegment], daytimeSleeps: [SleepSegment],
        validNaps: [SleepSegment]
    ) {
        self.date = date
        self.belongingDate = belongingDate
        self.statisticsRule = statisticsRule
        self.dailySummary = dailySummary
        self.metrics = metrics
        self.rawItems = rawItems
        self.nightSleeps = nightSleeps
        self.daytimeSleeps = daytimeSleeps
        self.validNaps = validNaps
    }
}
