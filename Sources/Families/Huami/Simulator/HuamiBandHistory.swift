import Foundation
import TSHuami
import TSModels
import TSSimulatedHistory

/// What a simulated Huami band recorded, one sample a minute: the nights of the project's
/// deterministic generator (`SleepDataGenerator`, the same nights as the other simulated watches
/// for the same seed and zone) and the heart rate it measured (`HeartRateHistoryGenerator`).
///
/// A minute's stage is that of the generated item holding the minute's middle (items start at
/// any second; a band records whole minutes); a minute no item holds is awake (the wearer up and
/// about). A minute carries a heart rate when a generated reading falls in it.
public struct HuamiBandHistory: Sendable {
    public let timeZone: TimeZone
    public let format: HuamiSampleFormat
    /// The first minute the band holds (a minute's start, Unix seconds).
    public let start: Int64
    /// The minute the band is recording now: samples exist for [start, end).
    public let end: Int64
    /// The generator's items behind the samples (not minute-aligned).
    public let generated: [SleepItem]
    private let stages: [Int64: SleepStage]
    private let heartRate: [Int64: UInt8]

    public init(seed: UInt64, timeZone: TimeZone, now: Date, days: Int, format: HuamiSampleFormat) {
        self.timeZone = timeZone
        self.format = format
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let last = Self.minute(containing: nowSeconds)
        end = last
        let first = last - Int64(max(0, days)) * 86_400
        start = first
        let generated = SleepDataGenerator(seed: seed, timeZone: timeZone).records(days: max(0, days), lastMorning: now, notAfter: now)
            .filter { $0.end > first }
        self.generated = generated
        var stages: [Int64: SleepStage] = [:]
        for item in generated {
            // Minutes whose middle (minute + 30 s) lies in [item.start, item.end).
            var minute = Self.minute(containing: item.start - 30)
            if minute < item.start - 30 { minute += 60 }
            while minute + 30 < item.end {
                if minute >= first && minute < last { stages[minute] = item.stage }
                minute += 60
            }
        }
        self.stages = stages
        var heartRate: [Int64: UInt8] = [:]
        for sample in HeartRateHistoryGenerator(seed: seed).samples(start: first, end: last, records: generated) where (1...254).contains(sample.bpm) {
            heartRate[Self.minute(containing: Int64(sample.time.timeIntervalSince1970))] = UInt8(sample.bpm)
        }
        self.heartRate = heartRate
    }

    static func minute(containing seconds: Int64) -> Int64 {
        seconds >= 0 ? seconds / 60 * 60 : (seconds - 59) / 60 * 60
    }

    /// How many samples the band holds.
    public var minutes: Int { Int((end - start) / 60) }

    /// The stage the wearer was in during the minute starting at `minute`; nil: awake outside sleep.
    public func stage(at minute: Int64) -> SleepStage? { stages[minute] }

    /// The heart rate the band measured in that minute; nil: none.
    public func bpm(at minute: Int64) -> UInt8? { heartRate[minute] }

    /// The sample of the minute starting at `minute` (§9 of protocol-spec/huami/huami.md read backwards).
    public func sample(at minute: Int64) -> HuamiSample {
        HuamiSample.minute(stage(at: minute) ?? .awake, format: format, heartRate: bpm(at: minute))
    }

    /// `count` samples from the minute starting at `from`.
    public func samples(from: Int64, count: Int) -> [HuamiSample] {
        (0..<max(0, count)).map { sample(at: from + Int64($0) * 60) }
    }

    /// The ground truth of a sleep sync: the items protocol-spec/huami/huami.md §9 reads from every
    /// sample the band holds, read in one go (nights still open at `end` are not included).
    public var sleepItems: [SleepItem] {
        var reader = HuamiSleepReader()
        return reader.read(HuamiActivity(start: start, format: format, samples: samples(from: start, count: minutes)))
    }

    /// The ground truth of the heart rate a sync stores: every minute with a reading, at its start.
    public var heartRates: [HeartRateSample] {
        heartRate.keys.sorted().map { HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval($0)), bpm: Int(heartRate[$0]!)) }
    }
}
