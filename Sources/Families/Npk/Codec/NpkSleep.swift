import TSModels

/// A sleep item the gateway did not take, and why (it is never stored).
public struct NpkRejectedSleepItem: Sendable, Hashable {
    /// Its place in the day's items.
    public var index: Int
    public var error: NpkError
}

/// One day of sleep from the watch as the gateway's records.
public struct NpkSleepDayRecords: Sendable, Hashable {
    /// Unix seconds of the day's 00:00 as the watch counts it (local or UTC midnight: not known).
    public var day: Int64
    public var items: [SleepItem]
    public var rejected: [NpkRejectedSleepItem]
}

public enum NpkSleep {
    /// The day's items as records: start in Unix seconds, duration in seconds, stage 0 awake,
    /// 1 light, 2 deep, 3 REM. An item with a negative or zero duration or another stage is
    /// rejected with its reason; the others are kept.
    public static func records(from day: TSMetaSleepDay) -> NpkSleepDayRecords {
        var items: [SleepItem] = [], rejected: [NpkRejectedSleepItem] = []
        for (index, item) in day.items.enumerated() {
            let start = NpkTime.unix(fromT2000: item.timestamp)
            if item.duration < 0 {
                rejected.append(NpkRejectedSleepItem(index: index, error: NpkError(
                    .negativeDuration, "sleep item \(index) of the day starting \(start): duration \(item.duration) s is negative")))
            } else if item.duration == 0 {
                rejected.append(NpkRejectedSleepItem(index: index, error: NpkError(
                    .zeroDuration, "sleep item \(index) of the day starting \(start): duration is 0 s")))
            } else if let stage = UInt8(exactly: item.type).flatMap(SleepStage.init(rawValue:)) {
                items.append(SleepItem(stage: stage, start: start, duration: Int64(item.duration)))
            } else {
                rejected.append(NpkRejectedSleepItem(index: index, error: NpkError(
                    .unknownSleepStage, "sleep item \(index) at \(start): stage \(item.type) is not 0 awake, 1 light, 2 deep or 3 REM")))
            }
        }
        return NpkSleepDayRecords(day: NpkTime.unix(fromT2000: day.timestamp), items: items, rejected: rejected)
    }
}
