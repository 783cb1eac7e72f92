/// A sleep stage as the watch reports it (AASM grouping: light = N1 + N2, deep = N3).
/// The raw values are the wire values.
public enum SleepStage: UInt8, Sendable, Hashable, CaseIterable, Comparable {
    case awake = 0
    case light = 1
    case deep = 2
    case rem = 3

    public var name: String {
        switch self {
        case .awake: "awake"
        case .light: "light"
        case .deep: "deep"
        case .rem: "rem"
        }
    }

    /// Accepts the names `awake`, `light`, `deep`, `rem` (any case) and the wire numbers 0…3.
    public init?(name: String) {
        switch name.lowercased() {
        case "awake", "0": self = .awake
        case "light", "1": self = .light
        case "deep", "2": self = .deep
        case "rem", "3": self = .rem
        default: return nil
        }
    }

    public static func < (lhs: SleepStage, rhs: SleepStage) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension SleepStage: Codable {
    /// Encoded as its name; decoded from a name or a wire number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(UInt8.self) {
            guard let stage = SleepStage(rawValue: number) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "sleep stage \(number) is not one of 0 (awake), 1 (light), 2 (deep), 3 (rem)")
            }
            self = stage
            return
        }
        let text = try container.decode(String.self)
        guard let stage = SleepStage(name: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "sleep stage \"\(text)\" is not one of awake, light, deep, rem")
        }
        self = stage
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// One raw sleep record: a stage held from `start` for `duration` seconds.
/// Times are Unix seconds (UTC); the record carries no time zone.
public struct SleepItem: Sendable, Hashable, Codable {
    public var stage: SleepStage
    /// Unix time in seconds of the first second of this stage.
    public var start: Int64
    /// Length in seconds.
    public var duration: Int64

    public init(stage: SleepStage, start: Int64, duration: Int64) {
        self.stage = stage
        self.start = start
        self.duration = duration
    }

    /// First second after the item: `start + duration`, saturating at the Int64 limits instead of
    /// trapping on absurd input.
    public var end: Int64 {
        let (sum, overflow) = start.addingReportingOverflow(duration)
        return overflow ? (duration > 0 ? .max : .min) : sum
    }
}

/// How a watch turns raw items into daily reports (TopStep statistics rules 0…3).
public enum StatisticsRule: UInt8, Sendable, Hashable, CaseIterable, Codable {
    /// Rule 0: no naps; the sensor runs 20:00–12:00 and all sleep is night sleep.
    case withoutNap = 0
    /// Rule 1: naps; night 20:00–09:00, daytime 09:00–20:00.
    case withNap = 1
    /// Rule 2: the longest continuous night segment in 20:00–08:00, valid naps counted in the total.
    case longestNight = 2
    /// Rule 3: the longest continuous segment only, night or day.
    case longestOnly = 3

    /// The rule nights are cut by, wherever they are (reports, uploads, MQTT, the CLI): the one
    /// asked for, else the configured one, else the watch's own, else rule 1 (a watch never
    /// reached yet, or one whose dialect has no rule).
    public static func resolved(asked: StatisticsRule? = nil, configured: StatisticsRule?, watch: StatisticsRule?) -> StatisticsRule {
        asked ?? configured ?? watch ?? .withNap
    }
}
