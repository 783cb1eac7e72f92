import TSSleep

/// Calendar arithmetic on local dates, by the proleptic Gregorian day count: no time zone is
/// involved, because a local date is already a wall-clock date.
enum ReportCalendar {
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days since 1970-01-01.
    static func dayNumber(_ date: LocalDate) -> Int {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (date.month + (date.month > 2 ? -3 : 9)) + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func date(dayNumber: Int) -> LocalDate {
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return LocalDate(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// Every date from `first` to `last`, inclusive; empty when `last` is before `first`.
    static func dates(from first: LocalDate, through last: LocalDate) -> [LocalDate] {
        let start = dayNumber(first), end = dayNumber(last)
        guard end >= start else { return [] }
        return (start...end).map { date(dayNumber: $0) }
    }

    /// "Fri", Monday first.
    static func weekday(_ date: LocalDate) -> String {
        // 1970-01-01 was a Thursday (index 3).
        weekdayNames[((dayNumber(date) + 3) % 7 + 7) % 7]
    }

    static func monthName(_ date: LocalDate) -> String {
        monthNames[min(max(date.month - 1, 0), 11)]
    }

    /// "Fri 20 Nov".
    static func long(_ date: LocalDate) -> String {
        "\(weekday(date)) \(date.day) \(monthName(date))"
    }

    /// "20 Nov".
    static func short(_ date: LocalDate) -> String {
        "\(date.day) \(monthName(date))"
    }
}
