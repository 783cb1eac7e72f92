import Foundation
import TSModels

/// The instants (Unix seconds) that bound one belonging date's windows, all in local time.
public struct DayWindows: Sendable, Hashable {
    public var date: LocalDate
    /// 00:00 local on `date`.
    public var startOfDate: Int64
    /// 20:00 local on the day before `date`: the day's first instant.
    public var eveningBefore: Int64
    /// 08:00 local on `date` (end of rule 2's night window).
    public var eight: Int64
    /// 09:00 local on `date` (end of rule 1's night window, start of its daytime window).
    public var nine: Int64
    /// 12:00 local on `date` (end of rule 0's sensor window).
    public var noon: Int64
    /// 20:00 local on `date`: the first instant of the next belonging date.
    public var evening: Int64

    public init(date: LocalDate, startOfDate: Int64, eveningBefore: Int64, eight: Int64, nine: Int64, noon: Int64, evening: Int64) {
        self.date = date
        self.startOfDate = startOfDate
        self.eveningBefore = eveningBefore
        self.eight = eight
        self.nine = nine
        self.noon = noon
        self.evening = evening
    }
}

/// Local wall-clock arithmetic in one IANA time zone, through Foundation's Calendar so that
/// DST changes are honoured. Only called a few times per day, never per item.
public struct LocalDayClock: Sendable {
    public static let dayBoundaryHour = 20
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The local date and hour of an instant.
    public func localDateAndHour(of instant: Int64) -> (date: LocalDate, hour: Int) {
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: Date(timeIntervalSince1970: TimeInterval(instant)))
        return (LocalDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1), parts.hour ?? 0)
    }

    /// The date an instant belongs to: its local date, or the next one from 20:00 local on.
    public func belongingDate(of instant: Int64) -> LocalDate {
        let (date, hour) = localDateAndHour(of: instant)
        return hour >= Self.dayBoundaryHour ? adding(days: 1, to: date) : date
    }

    public func adding(days: Int, to date: LocalDate) -> LocalDate {
        guard let base = calendar.date(from: components(date, hour: 12)),
              let moved = calendar.date(byAdding: .day, value: days, to: base)
        else { return date }
        let parts = calendar.dateComponents([.year, .month, .day], from: moved)
        return LocalDate(year: parts.year ?? date.year, month: parts.month ?? date.month, day: parts.day ?? date.day)
    }

    /// Local `hour`:00 on `date`; for an hour the zone skips, the instant Calendar resolves it to.
    public func instant(of date: LocalDate, hour: Int) -> Int64 {
        guard let resolved = calendar.date(from: components(date, hour: hour)) else { return 0 }
        return Int64(resolved.timeIntervalSince1970.rounded(.down))
    }

    public func startOfDate(_ date: LocalDate) -> Int64 {
        guard let noon = calendar.date(from: components(date, hour: 12)) else { return 0 }
        return Int64(calendar.startOfDay(for: noon).timeIntervalSince1970.rounded(.down))
    }

    public func windows(for date: LocalDate) -> DayWindows {
        DayWindows(
            date: date,
            startOfDate: startOfDate(date),
            eveningBefore: instant(of: adding(days: -1, to: date), hour: Self.dayBoundaryHour),
            eight: instant(of: date, hour: 8),
            nine: instant(of: date, hour: 9),
            noon: instant(of: date, hour: 12),
            evening: instant(of: date, hour: Self.dayBoundaryHour))
    }

    private func components(_ date: LocalDate, hour: Int) -> DateComponents {
        DateComponents(calendar: calendar, timeZone: timeZone, year: date.year, month: date.month, day: date.day, hour: hour, minute: 0, second: 0)
    }
}
