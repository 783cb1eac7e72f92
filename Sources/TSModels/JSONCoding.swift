import Foundation

/// The project's JSON encoders: one configuration, and one named variant where documents differ
/// on purpose. Every JSON text the project writes (`--json` output, D-Bus and MQTT payloads,
/// upload bodies, files) comes from here.
public enum JSONCoding {
    /// The project's JSON: keys sorted, "/" written as it is (`"/api/v1"`, not `"\/api\/v1"`).
    /// `pretty`: indented for people (`--json` documents, exports); `iso8601Dates`: a `Date` as
    /// an ISO 8601 string (otherwise Foundation's seconds since 2001).
    public static func encoder(pretty: Bool = false, iso8601Dates: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        if iso8601Dates { encoder.dateEncodingStrategy = .iso8601 }
        return encoder
    }

    /// Records a component writes for itself and reads back (captures, the simulator's state and
    /// ground truth, the store's JSON columns): Foundation's escaping of "/" is kept, so that what
    /// was written before reads and compares byte for byte. `sortedKeys: false`: the store's
    /// columns that were always written in declaration order.
    public static func recordEncoder(sortedKeys: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        if sortedKeys { encoder.outputFormatting = [.sortedKeys] }
        return encoder
    }
}
