import Foundation

/// A calendar date as the ring's clock shows it (proleptic Gregorian; no zone).
public struct RingDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()

    /// The date `days` days after 1970-01-01.
    public init(daysSince1970 days: Int64) {
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(days * 86400)))
        self.init(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
    }

    /// Days from 1970-01-01 to this date (a day past the month's end counts on into the next month).
    public var daysSince1970: Int64 {
        let midnight = Self.calendar.date(from: DateComponents(year: year, month: month, day: day)) ?? Date(timeIntervalSince1970: 0)
        return Int64((midnight.timeIntervalSince1970 / 86400).rounded(.down))
    }

    /// Whether the fields name a date that exists.
    public var exists: Bool {
        (1...12).contains(month) && day >= 1 && RingDate(daysSince1970: daysSince1970) == self
    }

    public func adding(days: Int) -> RingDate { RingDate(daysSince1970: daysSince1970 + Int64(days)) }

    /// Seconds of this date's midnight on the ring's clock, counted as if the clock were UTC.
    public var wallSeconds: Int64 { daysSince1970 * 86400 }

    /// Parses `YYYY-MM-DD`.
    public init?(iso text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
        guard exists else { return nil }
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    public static func < (lhs: RingDate, rhs: RingDate) -> Bool { lhs.daysSince1970 < rhs.daysSince1970 }
}

/// A date and time on the ring's clock: local wall-clock time without a zone
/// (protocol-spec/qring/qring.md, "Time base").
public struct RingDateTime: Sendable, Hashable {
    public var date: RingDate
    /// Seconds after midnight, 0..<86400.
    public var secondOfDay: Int

    public init(date: RingDate, secondOfDay: Int) {
        self.date = date
        self.secondOfDay = secondOfDay
    }

    public init(wallSeconds: Int64) {
        let days = wallSeconds >= 0 ? wallSeconds / 86400 : (wallSeconds - 86399) / 86400
        self.init(date: RingDate(daysSince1970: days), secondOfDay: Int(wallSeconds - days * 86400))
    }

    /// The wall-clock time `instant` shows in `zone`.
    public init(_ instant: Date, in zone: TimeZone) {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        self.init(wallSeconds: seconds + Int64(zone.secondsFromGMT(for: instant)))
    }

    public var hour: Int { secondOfDay / 3600 }
    public var minute: Int { secondOfDay / 60 % 60 }
    public var second: Int { secondOfDay % 60 }

    /// Seconds since 1970-01-01 00:00 on the ring's clock, counted as if the clock were UTC.
    public var wallSeconds: Int64 { date.wallSeconds + Int64(secondOfDay) }
}

/// How a wall-clock time from the ring becomes an instant, in the gateway's named time zone.
public enum RingClock {
    /// The Unix time of `wallSeconds` read in `zone`: with the offset in effect a day earlier when
    /// that reading is consistent (so a repeated hour reads as its first occurrence), else with the
    /// offset a day later, else (an hour the clocks skipped) with the offset a day earlier, as a
    /// ring whose clock was not moved yet shows it.
    public static func instant(ofWall wallSeconds: Int64, in zone: TimeZone) -> Int64 {
        func offset(at instant: Int64) -> Int64 {
            Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
        }
        let before = offset(at: wallSeconds - 86400)
        let after = offset(at: wallSeconds + 86400)
        if offset(at: wallSeconds - before) == before { return wallSeconds - before }
        if offset(at: wallSeconds - after) == after { return wallSeconds - after }
        return wallSeconds - before
    }

    /// The ring's date at `instant`, for a ring whose clock the gateway set in `zone`.
    public static func today(at instant: Date, in zone: TimeZone) -> RingDate {
        RingDateTime(instant, in: zone).date
    }
}
