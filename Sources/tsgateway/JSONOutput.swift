import Foundation
import TSModels

/// Pretty, key-sorted JSON on standard output.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        Swift.print(String(decoding: try JSONCoding.encoder(pretty: true).encode(value), as: UTF8.self))
    }
}
