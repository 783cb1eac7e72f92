import Foundation
import TSModels
import TSSleep

enum Zone {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let utc = TimeZone(identifier: "UTC")!
}

/// Unix seconds of a local wall-clock time "YYYY-MM-DD HH:MM[:SS]" in `zone`; for test literals
/// only (the times used are never ambiguous).
func at(_ text: String, _ zone: TimeZone = Zone.berlin) -> Int64 {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == ":" }).compactMap { Int($0) }
    let components = DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts.count > 5 ? parts[5] : 0)
    return Int64(calendar.date(from: components)!.timeIntervalSince1970)
}

func item(_ stage: SleepStage, _ start: Int64, minutes: Int64) -> SleepItem {
    SleepItem(stage: stage, start: start, duration: minutes * 60)
}

/// Items laid end to end from `start`: (stage, minutes) pairs.
func run(from start: Int64, _ steps: [(SleepStage, Int64)]) -> [SleepItem] {
    var items: [SleepItem] = []
    var time = start
    for (stage, minutes) in steps {
        items.append(item(stage, time, minutes: minutes))
        time += minutes * 60
    }
    return items
}

func day(_ days: [DailySleepModel], _ text: String) -> DailySleepModel? {
    days.first { $0.date.description == text }
}
