import Foundation

/// A time as the band writes and reads it (protocol-spec/huami/huami.md §3): the local wall-clock
/// fields and the zone offset in quarter-hours (DST included) that belongs to them.
///
/// - the Current Time form (`2A2B`, 11 bytes): year u16 LE, month, day, hour, minute, second, day
///   of week (1 = Monday … 7 = Sunday), fraction (1/256 s), `00`, zone;
/// - the short form (8 bytes, the activity fetch's `since` and start): year u16 LE, month, day,
///   hour, minute, second (`00` when written), zone.
public struct HuamiTime: Sendable, Hashable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 1 = Monday … 7 = Sunday; the short form does not carry it (it is then computed).
    public var weekday: Int
    /// 1/256 s; the short form does not carry it (0).
    public var fraction: Int
    /// The zone's offset from UTC in quarter-hours, DST included (signed byte).
    public var zoneQuarterHours: Int

    public static let currentTimeSize = 11
    public static let shortSize = 8

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int = 0, fraction: Int = 0, zoneQuarterHours: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.fraction = fraction
        self.zoneQuarterHours = zoneQuarterHours
        weekday = Self.weekday(year: year, month: month, day: day)
    }

    /// The wall-clock time of `unixSeconds` in `zone`, with that instant's offset (DST included).
    public init(unixSeconds: Int64, zone: TimeZone) {
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
        let wall = unixSeconds + Int64(offset)
        let days = Int(wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400)
        let secondOfDay = Int(wall - Int64(days) * 86_400)
        let (y, m, d) = Self.civil(daysSince1970: days)
        self.init(year: y, month: m, day: d, hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60,
                  zoneQuarterHours: offset / 900)
    }

    /// The instant these fields name: the wall-clock time less the zone offset.
    public var unixSeconds: Int64 {
        let days = Int64(Self.daysSince1970(year: year, month: month, day: day))
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(zoneQuarterHours * 900)
    }

    public var currentTimeBytes: [UInt8] {
        le16(year) + [month, day, hour, minute, second, weekday, fraction, 0, zoneQuarterHours].map { UInt8(truncatingIfNeeded: $0) }
    }

    public var shortBytes: [UInt8] {
        le16(year) + [month, day, hour, minute, second, zoneQuarterHours].map { UInt8(truncatingIfNeeded: $0) }
    }

    /// Reads the 11-byte Current Time form.
    public init(currentTimeBytes bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count == Self.currentTimeSize else { throw HuamiError(.badLength, "a current time has 11 bytes, not \(raw.count)") }
        self.init(year: u16(raw, 0), month: Int(raw[2]), day: Int(raw[3]), hour: Int(raw[4]), minute: Int(raw[5]), second: Int(raw[6]),
                  fraction: Int(raw[8]), zoneQuarterHours: Int(Int8(bitPattern: raw[10])))
        try check()
        guard (1...7).contains(Int(raw[7])) else { throw HuamiError(.valueOutOfRange, "day of week \(raw[7]) is not 1 (Monday) … 7 (Sunday)") }
        guard Int(raw[7]) == weekday else {
            throw HuamiError(.invalidValue, "day of week \(raw[7]) does not match \(year)-\(month)-\(day), a day \(weekday)")
        }
    }

    /// Reads the 8-byte short form.
    public init(shortBytes bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count == Self.shortSize else { throw HuamiError(.badLength, "a short time has 8 bytes, not \(raw.count)") }
        self.init(year: u16(raw, 0), month: Int(raw[2]), day: Int(raw[3]), hour: Int(raw[4]), minute: Int(raw[5]), second: Int(raw[6]),
                  zoneQuarterHours: Int(Int8(bitPattern: raw[7])))
        try check()
    }

    /// Fields a band cannot mean: a date that does not exist, an hour past 23, a zone outside −48…56.
    func check() throws(HuamiError) {
        guard (1...12).contains(month), (1...Self.daysIn(year: year, month: month)).contains(day) else {
            throw HuamiError(.valueOutOfRange, "\(year)-\(month)-\(day) is not a date")
        }
        guard hour <= 23, minute <= 59, second <= 59 else { throw HuamiError(.valueOutOfRange, "\(hour):\(minute):\(second) is not a time of day") }
        guard (-48...56).contains(zoneQuarterHours) else {
            throw HuamiError(.valueOutOfRange, "zone offset \(zoneQuarterHours) quarter-hours is outside −48 … 56 (UTC−12 … UTC+14)")
        }
    }

    public var description: String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let minutes = abs(zoneQuarterHours) * 15
        return "\(year)-\(two(month))-\(two(day)) \(two(hour)):\(two(minute)):\(two(second)) \(zoneQuarterHours < 0 ? "-" : "+")\(two(minutes / 60)):\(two(minutes % 60))"
    }

    // Proleptic Gregorian calendar arithmetic (days since 1970-01-01).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(daysSince1970 days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// 1 = Monday … 7 = Sunday (1970-01-01 was a Thursday).
    static func weekday(year: Int, month: Int, day: Int) -> Int {
        let days = daysSince1970(year: year, month: month, day: day)
        return ((days + 3) % 7 + 7) % 7 + 1
    }
}
