import CDBus

/// A D-Bus error: its name (`org.freedesktop.DBus.Error.ServiceUnknown`, `org.bluez.Error.Failed`,
/// …) and message, whether a peer replied with it or it arose locally.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let timeout = "org.freedesktop.DBus.Error.Timeout"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
    public static let addressInUse = "org.freedesktop.DBus.Error.AddressInUse"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"

    static let outOfMemory = BusError(name: noMemory, message: "libdbus ran out of memory")

    /// A reply whose arguments do not have the expected signature.
    public static func unexpectedReply(_ what: String, expected: String, got: String) -> BusError {
        BusError(name: invalidSignature, message: "\(what) replied with signature \"\(got)\", expected \"\(expected)\"")
    }

    /// Takes the contents of a filled libdbus error and frees it.
    static func take(_ error: inout DBusError) -> BusError {
        defer { dbus_error_free(&error) }
        return BusError(name: error.name.map { String(cString: $0) } ?? failed, message: error.message.map { String(cString: $0) } ?? "")
    }
}
