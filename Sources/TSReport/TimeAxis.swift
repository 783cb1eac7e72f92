import Foundation
import TSSleep

/// A labelled mark on a time axis.
public struct TimeTick: Sendable, Hashable {
    /// Unix seconds.
    public var instant: Int64
    /// Local wall-clock time, "HH:MM".
    public var label: String
}

/// Wall-clock time in one zone, from the zone's offset at each instant: a night that crosses a
/// DST change gets the labels its clocks showed (02:00 twice at the end of October in Berlin),
/// at positions that stay proportional to elapsed time.
public enum TimeAxis {
    /// Seconds east of UTC at `instant`.
    static func offset(at instant: Int64, in zone: TimeZone) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
    }

    /// Seconds since local midnight at `instant`.
    static func secondOfDay(_ instant: Int64, in zone: TimeZone) -> Int64 {
        let local = instant &+ offset(at: instant, in: zone)
        return ((local % 86_400) + 86_400) % 86_400
    }

    /// The local date of `instant` in `zone`.
    static func localDate(of instant: Int64, in zone: TimeZone) -> LocalDate {
        let local = instant &+ offset(at: instant, in: zone)
        return LocalDate(daysSince1970: Int((local - secondOfDay(instant, in: zone)) / 86_400))
    }

    /// "HH:MM" in `zone`.
    public static func clock(_ instant: Int64, in zone: TimeZone) -> String {
        let second = secondOfDay(instant, in: zone)
        let hour = second / 3600, minute = second % 3600 / 60
        return "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
    }

    /// "UTC+02:00".
    public static func offsetName(at instant: Int64, in zone: TimeZone) -> String {
        let seconds = offset(at: instant, in: zone), magnitude = abs(seconds) / 60
        let hours = magnitude / 60, minutes = magnitude % 60
        return "UTC\(seconds < 0 ? "−" : "+")\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }

    /// Minutes between labels for a span: about ten labels at most.
    static func tickMinutes(span: Int64) -> Int64 {
        switch span {
        case ..<(3 * 3600): 30
        case ..<(12 * 3600): 60
        case ..<(24 * 3600): 120
        default: 180
        }
    }

    /// The instants in [start, end] whose local time is a whole multiple of the tick interval
    /// (every local hour for a night), labelled in `zone`. Every offset in the time zone
    /// database is a whole number of minutes, so stepping by minutes finds each one.
    public static func ticks(from start: Int64, to end: Int64, in zone: TimeZone) -> [TimeTick] {
        guard end > start, end - start <= 4 * 86_400 else { return [] }
        let interval = tickMinutes(span: end - start) * 60
        var ticks: [TimeTick] = []
        var instant = start - ((start % 60) + 60) % 60
        if instant < start { instant += 60 }
        while instant <= end {
            if secondOfDay(instant, in: zone) % interval == 0 {
                ticks.append(TimeTick(instant: instant, label: clock(instant, in: zone)))
                // The next candidate is at least a quarter of an hour away in any zone.
                instant += 15 * 60
                continue
            }
            instant += 60
        }
        return ticks
    }

    /// The offsets in force during [start, end], in order, when there is more than one.
    public static func offsetChanges(from start: Int64, to end: Int64, in zone: TimeZone) -> [String] {
        var names = [offsetName(at: start, in: zone)]
        var instant = start
        while let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(instant))),
              Int64(next.timeIntervalSince1970) <= end, Int64(next.timeIntervalSince1970) > instant {
            instant = Int64(next.timeIntervalSince1970)
            names.append(offsetName(at: instant, in: zone))
        }
        return names.count > 1 ? names : []
    }
}
