import Foundation
import TSModels
import Testing

@Suite("alarm repeat days")
struct AlarmRepeatTests {
    func calendar(_ zone: String) throws -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        return calendar
    }

    @Test("each day bit allows its own weekday only; once allows every day")
    func dayBits() throws {
        let berlin = try calendar("Europe/Berlin")
        // Monday 2026-11-23 12:00 UTC, then the six days after it.
        let monday = Date(timeIntervalSince1970: 1_795_435_200)
        #expect(berlin.component(.weekday, from: monday) == 2)
        for (index, entry) in AlarmRepeat.days.enumerated() {
            for offset in 0..<7 {
                let day = monday + TimeInterval(offset * 86_400)
                #expect(entry.day.allows(day, in: berlin) == (offset == index), "\(entry.name) on day \(offset)")
            }
            #expect(AlarmRepeat.once.allows(monday + TimeInterval(index * 86_400), in: berlin))
        }
        #expect(AlarmRepeat.workdays.allows(monday, in: berlin) && !AlarmRepeat.weekend.allows(monday, in: berlin))
    }

    @Test("the day is the calendar zone's: Sunday 23:30 in New York is Monday in Berlin")
    func zoneDecidesTheDay() throws {
        // 2026-11-23 04:30 UTC: Sunday 23:30 in New York, Monday 05:30 in Berlin.
        let instant = Date(timeIntervalSince1970: 1_795_408_200)
        #expect(AlarmRepeat.sunday.allows(instant, in: try calendar("America/New_York")))
        #expect(!AlarmRepeat.sunday.allows(instant, in: try calendar("Europe/Berlin")))
        #expect(AlarmRepeat.monday.allows(instant, in: try calendar("Europe/Berlin")))
    }
}
