import Testing
@testable import TSSleep

/// LocalDate's day count (proleptic Gregorian, days since 1970-01-01), which the ISO 8601 reader,
/// the report's calendar and the benchmark's data share.
@Suite struct LocalDateDayCountTests {
    /// Day numbers as Python's `datetime.date` gives them (`(date - date(1970, 1, 1)).days`).
    @Test func knownDatesHaveTheirDayNumbers() {
        let known: [(String, Int)] = [
            ("1970-01-01", 0), ("1969-12-31", -1), ("2000-02-29", 11_016), ("2023-01-01", 19_358),
            ("2100-03-01", 47_541), ("0001-01-01", -719_162), ("9999-12-31", 2_932_896),
        ]
        for (text, days) in known {
            let date = LocalDate(text)!
            #expect(date.daysSince1970 == days, "\(text)")
            #expect(LocalDate(daysSince1970: days) == date, "\(days)")
        }
    }

    /// Every day from 1600 to 2400 follows the one before it (leap days of 1600, 2000 and 2400;
    /// none in 1700, 1800, 1900, 2100, 2200, 2300) and converts back to its number.
    @Test func consecutiveDaysRoundTripAcrossFourCenturies() {
        let first = LocalDate(year: 1600, month: 1, day: 1).daysSince1970
        let last = LocalDate(year: 2400, month: 12, day: 31).daysSince1970
        var previous = LocalDate(daysSince1970: first - 1)
        var leapDays: [Int] = []
        var wrong = 0
        for days in first...last {
            let date = LocalDate(daysSince1970: days)
            if date.daysSince1970 != days || !(previous < date) { wrong += 1 }
            if date.month == 2, date.day == 29, date.year % 100 == 0 { leapDays.append(date.year) }
            previous = date
        }
        #expect(wrong == 0)
        #expect(leapDays == [1600, 2000, 2400])
        #expect(last - first + 1 == 801 * 365 + 201 - 6, "801 years, 201 of them divisible by 4, 6 of those centuries not by 400")
    }
}
