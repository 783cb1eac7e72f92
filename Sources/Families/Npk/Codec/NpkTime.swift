import Foundation

/// NPK's clock: seconds since 2000-01-01T00:00:00 UTC in an int32 ("t2000"), and the zone as
/// seconds east of UTC.
public enum NpkTime {
    /// Unix time of 2000-01-01T00:00:00Z.
    public static let unixOf2000: Int64 = 946_684_800

    public static func unix(fromT2000 seconds: Int32) -> Int64 { Int64(seconds) + unixOf2000 }

    public static func t2000(fromUnix seconds: Int64) throws -> Int32 {
        let value = seconds - unixOf2000
        guard let t2000 = Int32(exactly: value) else {
            throw NpkError(.timeOutOfRange, "Unix time \(seconds) is outside what NPK's clock holds (seconds since 2000 in 32 bits: 1931…2068)", category: .invalidInput)
        }
        return t2000
    }

    /// The clock to send with set-time and inside bind/login: `date` and `zone`'s offset then.
    public static func timeModel(at date: Date, in zone: TimeZone) throws -> TSMetaTimeModel {
        var model = TSMetaTimeModel()
        model.timestamp = try t2000(fromUnix: Int64(date.timeIntervalSince1970.rounded(.down)))
        model.zoneOffset = Int32(zone.secondsFromGMT(for: date))
        return model
    }
}
