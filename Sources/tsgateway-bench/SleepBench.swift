import Foundation
import TSModels
import TSSleep

/// Reading and analysing minute-grained sleep items (one item per minute of recorded sleep):
/// `sleep analyze`'s decoder on JSON and CSV, against Foundation's JSONDecoder on the same JSON
/// measured in the same run; then the analysis itself.
func runSleepBenchmarks() throws {
    guard let zone = TimeZone(identifier: "Europe/Berlin") else {
        print("sleep: time zone Europe/Berlin unavailable; skipped")
        return
    }
    for (label, days, repetitions) in [("1 year", 365, 5), ("10 years", 3_650, 3)] {
        let items = minuteGrainedItems(days: days)
        let json = try JSONCoding.recordEncoder(sortedKeys: false).encode(items)
        let csv = Data(("stage,start,duration\n" + items.map { "\($0.stage.name),\($0.start),\($0.duration)\n" }.joined()).utf8)
        let isoCSV = Data(("stage,start,duration\n" + items.map { "\($0.stage.name),\(isoText($0.start)),\($0.duration)\n" }.joined()).utf8)
        let count = Double(items.count)
        func decoding(_ data: Data, _ format: SleepInputFormat) throws -> Double {
            try fastestSeconds(repetitions: repetitions) {
                let decoded = try SleepInputDecoder.decode(data, format: format)
                guard decoded.count == items.count else { throw BenchFailure("decoded \(decoded.count) of \(items.count) items") }
                blackHole(decoded)
            }
        }
        // Slow enough that fewer repetitions suffice for a stable minimum.
        let foundationSeconds = try fastestSeconds(repetitions: repetitions - 2) {
            blackHole(try JSONDecoder().decode([SleepItem].self, from: json))
        }
        let jsonSeconds = try decoding(json, .json)
        let csvSeconds = try decoding(csv, .csv)
        let isoSeconds = try decoding(isoCSV, .csv)
        var dayCount = 0
        let analyseSeconds = fastestSeconds(repetitions: repetitions) {
            let models = SleepProcessor.process(items, rule: .withNap, timeZone: zone)
            dayCount = models.count
            blackHole(models)
        }
        func row(_ name: String, _ seconds: Double, bytes: Int? = nil) -> String {
            let size = bytes.map { ", \($0 / 1_000_000) MB" } ?? ""
            return "  \(name.padding(toLength: 34, withPad: " ", startingAt: 0))\(formatRate(count / seconds, unit: " items"))  (\(String(format: "%.3f", seconds)) s\(size))"
        }
        print("\(label): \(items.count) items, \(dayCount) days, rule 1, Europe/Berlin")
        print(row("JSONDecoder (Foundation), JSON", foundationSeconds, bytes: json.count))
        print(row("sleep analyze input, JSON", jsonSeconds, bytes: json.count)
            + String(format: " = %.1f × JSONDecoder", foundationSeconds / jsonSeconds))
        print(row("sleep analyze input, CSV", csvSeconds, bytes: csv.count))
        print(row("sleep analyze input, CSV ISO 8601", isoSeconds, bytes: isoCSV.count))
        print(row("analyse", analyseSeconds))
        print("  goal ≥ 2 M items/s for JSON and CSV input: \(min(count / jsonSeconds, count / csvSeconds) >= 2e6 ? "met" : "not met")")
    }
}

/// `2025-01-01T22:30:00+01:00`: an ISO 8601 start as a person's export would write it.
private func isoText(_ seconds: Int64) -> String {
    let local = seconds + 3_600
    let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
    let second = local - days * 86_400
    let date = LocalDate(daysSince1970: Int(days))
    return String(format: "%04d-%02d-%02dT%02d:%02d:%02d+01:00", date.year, date.month, date.day, second / 3_600, second / 60 % 60, second % 60)
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
