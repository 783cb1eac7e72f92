import Foundation
import TSModels

/// Pretty, key-sorted JSON on standard output.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        Swift.print(String(decoding: try JSONCoding.encoder(pretty: true).encode(value), as: UTF8.self))
    }

    /// As `print`, with dates as ISO 8601 strings.
    static func printWithDates<T: Encodable>(_ value: T) throws {
        Swift.print(String(decoding: try JSONCoding.encoder(pretty: true, iso8601Dates: true).encode(value), as: UTF8.self))
    }
}
