/// A watch as the gateway names it everywhere (the store, D-Bus paths and properties, MQTT
/// topics, reports, uploads): its Bluetooth address, upper case with colons. Made once, where an
/// address comes in (the command line, the configuration, BlueZ); past that point ids are
/// compared as they are, never upper-cased again.
public struct WatchID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let address: BluetoothAddress

    public init(_ address: BluetoothAddress) {
        self.address = address
    }

    /// An address in any letter case ("aa:bb:cc:dd:ee:ff"); nil for anything else.
    public init?(_ text: String) {
        guard let address = BluetoothAddress(text) else { return nil }
        self.init(address)
    }

    /// "AA:BB:CC:DD:EE:FF".
    public var rawValue: String { address.description }
    public var description: String { rawValue }

    public static func < (lhs: WatchID, rhs: WatchID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let address = BluetoothAddress(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\"\(text)\" is not a Bluetooth address such as AA:BB:CC:DD:EE:FF"))
        }
        self.init(address)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
