import Foundation
import TSModels
import TSSleep

/// Sleep analysis throughput on minute-grained items (one item per minute of recorded sleep),
/// against JSON-decoding the same items measured in the same run.
func runSleepBenchmarks() throws {
    guard let zone = TimeZone(identifier: "Europe/Berlin") else {
        print("sleep: time zone Europe/Berlin unavailable; skipped")
        return
    }
    for (label, days, repetitions) in [("1 year", 365, 5), ("10 years", 3_650, 3)] {
        let items = minuteGrainedItems(days: days)
        let json = try JSONEncoder().encode(items)
        let decodeSeconds = try fastestSeconds(repetitions: repetitions) {
            blackHole(try JSONDecoder().decode([SleepItem].self, from: json))
        }
        var dayCount = 0
        let analyseSeconds = fastestSeconds(repetitions: repetitions) {
            let models = SleepProcessor.process(items, rule: .withNap, timeZone: zone)
            dayCount = models.count
            blackHole(models)
        }
        let count = Double(items.count)
        print("\(label): \(items.count) items, \(dayCount) days, rule 1, Europe/Berlin")
        print("  JSON decode only   \(formatRate(count / decodeSeconds, unit: "items"))  (\(String(format: "%.3f", decodeSeconds)) s, \(json.count / 1_000_000) MB)")
        print("  analyse            \(formatRate(count / analyseSeconds, unit: "items"))  (\(String(format: "%.3f", analyseSeconds)) s)")
        print("  analyse / decode   \(String(format: "%.2f", analyseSeconds / decodeSeconds))x the decode time")
    }
}

/// Nights of 22:30 + a few minutes to about 06:45 UTC with light/deep/REM cycles and brief
/// awakenings, plus a 40-minute nap every third day; deterministic.
private func minuteGrainedItems(days: Int) -> [SleepItem] {
    let firstMidnight: Int64 = 1_735_689_600  // 2025-01-01T00:00:00Z
    let cycle: [SleepStage] = Array(repeating: .light, count: 40) + Array(repeating: .deep, count: 25)
        + Array(repeating: .light, count: 15) + Array(repeating: .rem, count: 18) + [.awake, .awake]
    var items: [SleepItem] = []
    items.reserveCapacity(days * 520)
    for day in 0..<days {
        let bedtime = firstMidnight + Int64(day) * 86_400 + 22 * 3_600 + 1_800 + Int64(day % 7) * 60
        let minutes = 480 + (day * 37) % 60
        for minute in 0..<minutes {
            items.append(SleepItem(stage: cycle[(minute + day) % cycle.count], start: bedtime + Int64(minute) * 60, duration: 60))
        }
        if day % 3 == 0 {
            let napStart = firstMidnight + Int64(day) * 86_400 + 13 * 3_600
            for minute in 0..<40 {
                items.append(SleepItem(stage: minute < 30 ? .light : .deep, start: napStart + Int64(minute) * 60, duration: 60))
            }
        }
    }
    return items.sorted { $0.start < $1.start }
}
