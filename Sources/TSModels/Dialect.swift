/// The wire dialect a watch speaks, which decides the central that talks to it. An open set:
/// a dialect's module adds its constant beside its dialect, whose family's line in TSFamilies'
/// `WatchFamilies.builtIn` makes it one of the dialects this build knows. Spelled in lower case in the
/// configuration (`dialect:`), on the command line (`--dialect`) and in JSON.
public struct Dialect: RawRepresentable, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue.lowercased() }

    /// This project's own protocol v1 and v1.1 (protocol-spec/v1/wire-protocol.md).
    public static let protocolV1 = Dialect(rawValue: "v1")
    /// The Bluetooth SIG's standard services only: Device Information, Battery, Current Time, Heart Rate.
    public static let standard = Dialect(rawValue: "standard")

    public var description: String { rawValue }

    public static func < (lhs: Dialect, rhs: Dialect) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The GATT side of a dialect with its own service: where its frames go and come from.
public struct GATTProfile: Sendable, Hashable {
    public enum WriteMode: Sendable, Hashable {
        /// Write commands when the characteristic allows them, else write requests.
        case withoutResponseWhenAllowed
        /// Always write commands (ATT Write Without Response).
        case withoutResponse
        /// Always write requests (ATT Write Request).
        case withResponse
    }

    /// UUIDs in the 128-bit form, any letter case.
    public var service: String
    public var writeCharacteristic: String
    public var notifyCharacteristic: String
    public var writeMode: WriteMode
    /// A second write/notify pair beside the first (a ring's "big data" service); nil: none.
    public var secondChannel: GATTChannel?
    /// More characteristics the dialect's central writes, reads or hears from, addressed by
    /// service and UUID (a band's auth, fetch, data, battery, clock, heart rate): what a capture
    /// of its exchange follows beside the pairs, each as a channel of its own.
    public var characteristics: [GATTCharacteristicID]

    public init(service: String, writeCharacteristic: String, notifyCharacteristic: String, writeMode: WriteMode,
                secondChannel: GATTChannel? = nil, characteristics: [GATTCharacteristicID] = []) {
        self.service = service
        self.writeCharacteristic = writeCharacteristic
        self.notifyCharacteristic = notifyCharacteristic
        self.writeMode = writeMode
        self.secondChannel = secondChannel
        self.characteristics = characteristics
    }
}

/// A write and a notify characteristic of one service, written in the profile's write mode.
public struct GATTChannel: Sendable, Hashable {
    /// UUIDs in the 128-bit form, any letter case.
    public var service: String
    public var writeCharacteristic: String
    public var notifyCharacteristic: String

    public init(service: String, writeCharacteristic: String, notifyCharacteristic: String) {
        self.service = service
        self.writeCharacteristic = writeCharacteristic
        self.notifyCharacteristic = notifyCharacteristic
    }
}

/// One characteristic of a peripheral, by its service and its own UUID (128-bit form, stored
/// lower case): for a dialect that speaks over more characteristics than its profile's pairs
/// (a band's auth, configuration, fetch and data characteristics).
public struct GATTCharacteristicID: Sendable, Hashable, CustomStringConvertible {
    public let service: String
    public let uuid: String

    public init(service: String, uuid: String) {
        self.service = service.lowercased()
        self.uuid = uuid.lowercased()
    }

    public var description: String { "characteristic \(uuid) of service \(service)" }
}

/// A dialect name this build does not know.
public struct DialectError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var name: Dialect
    public var known: [Dialect]

    public init(name: Dialect, known: [Dialect]) {
        self.name = name
        self.known = known
    }

    public var description: String {
        "\"\(name)\" is not a dialect tsgateway speaks; use one of \(known.map(\.rawValue).joined(separator: ", "))"
    }

    public var category: ErrorCategory { .invalidInput }
}
