import TSSleep

/// Calendar arithmetic on local dates, by the proleptic Gregorian day count: no time zone is
/// involved, because a local date is already a wall-clock date.
enum ReportCalendar {
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Every date from `first` to `last`, inclusive; empty when `last` is before `first`.
    static func dates(from first: LocalDate, through last: LocalDate) -> [LocalDate] {
        let start = first.daysSince1970, end = last.daysSince1970
        guard end >= start else { return [] }
        return (start...end).map { LocalDate(daysSince1970: $0) }
    }

    /// "Fri", Monday first.
    static func weekday(_ date: LocalDate) -> String {
        // 1970-01-01 was a Thursday (index 3).
        weekdayNames[((date.daysSince1970 + 3) % 7 + 7) % 7]
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
