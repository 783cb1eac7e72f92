import Foundation
import TSModels
import TSSleep

enum Zone {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let newYork = TimeZone(identifier: "America/New_York")!
}

/// Unix seconds of an unambiguous local wall-clock time "YYYY-MM-DD HH:MM" in `zone`.
func at(_ text: String, _ zone: TimeZone = Zone.berlin) -> Int64 {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == ":" }).compactMap { Int($0) }
    let components = DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4])
    return Int64(calendar.date(from: components)!.timeIntervalSince1970)
}

/// Items laid end to end from `start`: (stage, minutes) pairs.
func run(from start: Int64, _ steps: [(SleepStage, Int64)]) -> [SleepItem] {
    var items: [SleepItem] = []
    var time = start
    for (stage, minutes) in steps {
        items.append(SleepItem(stage: stage, start: time, duration: minutes * 60))
        time += minutes * 60
    }
    return items
}

/// Nights written by hand, turned into daily models by the sleep engine.
enum Nights {
    static let ordinaryNight: [(SleepStage, Int64)] = [
        (.light, 30), (.deep, 60), (.light, 40), (.rem, 20), (.awake, 5), (.light, 60), (.deep, 45), (.rem, 25), (.light, 50), (.rem, 30), (.light, 20),
    ]

    /// Three nights (to the 18th, 19th and 20th of November 2026) and a 45-minute nap on the 19th, rule 1, Berlin.
    static func threeNightsAndANap() -> [DailySleepModel] {
        let items = run(from: at("2026-11-17 23:00"), ordinaryNight)
            + run(from: at("2026-11-18 22:30"), ordinaryNight)
            + run(from: at("2026-11-19 14:00"), [(.light, 15), (.deep, 20), (.light, 10)])
            + run(from: at("2026-11-19 23:15"), ordinaryNight)
        return SleepProcessor.process(items, rule: .withNap, timeZone: Zone.berlin)
    }
}
