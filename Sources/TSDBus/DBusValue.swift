/// A D-Bus value of any type, with its signature. Containers carry their element signatures so
/// that empty arrays and dictionaries still have a type.
public indirect enum DBusValue: Sendable, Hashable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor; received ones are owned by the receiver (close them).
    case unixFD(Int32)
    case array(element: String, [DBusValue])
    case dictionary(key: String, value: String, [DBusDictEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case let .array(element, _): "a" + element
        case let .dictionary(key, value, _): "a{" + key + value + "}"
        case let .structure(fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    public var description: String {
        switch self {
        case let .byte(v): "byte \(v)"
        case let .boolean(v): "\(v)"
        case let .int16(v): "int16 \(v)"
        case let .uint16(v): "uint16 \(v)"
        case let .int32(v): "int32 \(v)"
        case let .uint32(v): "uint32 \(v)"
        case let .int64(v): "int64 \(v)"
        case let .uint64(v): "uint64 \(v)"
        case let .double(v): "double \(v)"
        case let .string(v): "\"\(v)\""
        case let .objectPath(v): "objpath \(v)"
        case let .signature(v): "signature \(v)"
        case let .unixFD(v): "fd \(v)"
        case let .array(_, items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case let .dictionary(_, _, entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case let .structure(fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case let .variant(inner): "<\(inner)>"
        }
    }
}

public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// `a{sv}`: property maps, option dictionaries.
public typealias DBusProperties = [String: DBusValue]

extension DBusValue {
    /// `a{sv}` from a Swift dictionary (keys sorted, so messages are reproducible).
    public static func properties(_ map: DBusProperties) -> DBusValue {
        .dictionary(key: "s", value: "v", map.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .variant($0.value)) })
    }

    /// `as`.
    public static func strings(_ items: [String]) -> DBusValue { .array(element: "s", items.map(DBusValue.string)) }

    /// `ay`.
    public static func bytes(_ items: [UInt8]) -> DBusValue { .array(element: "y", items.map(DBusValue.byte)) }

    // Typed reads; nil when the value has another type. Variants are looked through.
    public var unwrapped: DBusValue { if case let .variant(inner) = self { inner.unwrapped } else { self } }
    public var stringValue: String? { if case let .string(v) = unwrapped { v } else if case let .objectPath(v) = unwrapped { v } else { nil } }
    public var byteValue: UInt8? { if case let .byte(v) = unwrapped { v } else { nil } }
    public var boolValue: Bool? { if case let .boolean(v) = unwrapped { v } else { nil } }
    public var int16Value: Int16? { if case let .int16(v) = unwrapped { v } else { nil } }
    public var uint16Value: UInt16? { if case let .uint16(v) = unwrapped { v } else { nil } }
    public var int32Value: Int32? { if case let .int32(v) = unwrapped { v } else { nil } }
    public var uint32Value: UInt32? { if case let .uint32(v) = unwrapped { v } else { nil } }
    public var int64Value: Int64? { if case let .int64(v) = unwrapped { v } else { nil } }
    public var objectPathValue: String? { if case let .objectPath(v) = unwrapped { v } else { nil } }
    public var arrayValue: [DBusValue]? { if case let .array(_, items) = unwrapped { items } else { nil } }
    public var stringArrayValue: [String]? { arrayValue?.compactMap(\.stringValue) }
    public var byteArrayValue: [UInt8]? {
        arrayValue?.compactMap { if case let .byte(b) = $0 { b } else { nil } }
    }

    /// `a{sv}` (or any string-keyed dictionary) as a Swift dictionary.
    public var propertiesValue: DBusProperties? {
        guard case let .dictionary(_, _, entries) = unwrapped else { return nil }
        var map: DBusProperties = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            map[key] = entry.value.unwrapped
        }
        return map
    }

    /// `a{oa{sa{sv}}}` (GetManagedObjects) as path → interface → properties.
    public var managedObjectsValue: [String: [String: DBusProperties]]? {
        guard case let .dictionary(_, _, entries) = unwrapped else { return nil }
        var objects: [String: [String: DBusProperties]] = [:]
        for entry in entries {
            guard let path = entry.key.objectPathValue, case let .dictionary(_, _, interfaces) = entry.value else { return nil }
            var byInterface: [String: DBusProperties] = [:]
            for interface in interfaces {
                guard let name = interface.key.stringValue, let properties = interface.value.propertiesValue else { return nil }
                byInterface[name] = properties
            }
            objects[path] = byInterface
        }
        return objects
    }
}
