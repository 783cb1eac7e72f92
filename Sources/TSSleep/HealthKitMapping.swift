import TSModels

/// HealthKit's sleep-analysis category values used for export. Encoded with the export names
/// (`in_bed`, `awake`, `core`, `deep`, `rem`); `healthKitRawValue` is HKCategoryValueSleepAnalysis.
public enum HealthKitSleepValue: String, Sendable, Hashable, Codable, CaseIterable {
    case inBed = "in_bed"
    case awake = "awake"
    case asleepCore = "core"
    case asleepDeep = "deep"
    case asleepREM = "rem"

    public init(stage: SleepStage) {
        switch stage {
        case .awake: self = .awake
        case .light: self = .asleepCore
        case .deep: self = .asleepDeep
        case .rem: self = .asleepREM
        }
    }

    public var healthKitRawValue: Int {
        switch self {
        case .inBed: 0
        case .awake: 2
        case .asleepCore: 3
        case .asleepDeep: 4
        case .asleepREM: 5
        }
    }
}

public struct HealthKitSleepSample: Sendable, Hashable, Codable {
    public var value: HealthKitSleepValue
    public var start: Int64
    public var end: Int64

    public init(value: HealthKitSleepValue, start: Int64, end: Int64) {
        self.value = value
        self.start = start
        self.end = end
    }
}

extension SleepSegment {
    /// One `in_bed` sample spanning the segment, then one sample per detail item in order.
    public var healthKitSamples: [HealthKitSleepSample] {
        [HealthKitSleepSample(value: .inBed, start: summary.start, end: summary.end)]
            + detailItems.map { HealthKitSleepSample(value: HealthKitSleepValue(stage: $0.stage), start: $0.start, end: $0.end) }
    }
}
