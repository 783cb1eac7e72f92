import CDBus

/// An owned libdbus message.
public final class DBusMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over one reference.
    init(adopting raw: OpaquePointer) { self.raw = raw }

    deinit { dbus_message_unref(raw) }

    public static func methodCall(destination: String?, path: String, interface: String?, member: String) throws(BusError) -> DBusMessage {
        guard let raw = dbus_message_new_method_call(destination, path, interface, member) else {
            throw BusError(name: BusError.invalidArgs, message: "cannot build a call to \(interface ?? "").\(member) on \(path): check the path and names")
        }
        return DBusMessage(adopting: raw)
    }

    public static func signal(path: String, interface: String, member: String) throws(BusError) -> DBusMessage {
        guard let raw = dbus_message_new_signal(path, interface, member) else {
            throw BusError(name: BusError.invalidArgs, message: "cannot build signal \(interface).\(member) on \(path)")
        }
        return DBusMessage(adopting: raw)
    }

    func methodReturn() -> DBusMessage? {
        dbus_message_new_method_return(raw).map(DBusMessage.init(adopting:))
    }

    func errorReply(_ error: BusError) -> DBusMessage? {
        dbus_message_new_error(raw, error.name, error.message).map(DBusMessage.init(adopting:))
    }

    public var type: Int32 { dbus_message_get_type(raw) }
    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    var isError: Bool { type == DBUS_MESSAGE_TYPE_ERROR }

    // MARK: Arguments

    public func append(_ values: [DBusValue]) throws(BusError) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iterator)
        for value in values { try Self.append(value, to: &iterator) }
    }

    /// Every argument of the message.
    public func arguments() throws(BusError) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(try Self.read(&iterator))
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    private static func code(_ character: Character) -> Int32 { Int32(character.asciiValue ?? 0) }

    private static func appendBasic<T>(_ type: Character, _ value: T, _ iterator: inout DBusMessageIter) throws(BusError) {
        var copy = value
        let ok = withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iterator, code(type), UnsafeRawPointer($0)) }
        guard ok != 0 else { throw BusError.outOfMemory }
    }

    private static func appendString(_ type: Character, _ text: String, _ iterator: inout DBusMessageIter) throws(BusError) {
        let ok = text.withCString { pointer in
            var cString: UnsafePointer<CChar>? = pointer
            return withUnsafePointer(to: &cString) { dbus_message_iter_append_basic(&iterator, code(type), UnsafeRawPointer($0)) }
        }
        guard ok != 0 else { throw BusError(name: BusError.invalidArgs, message: "cannot send \"\(text)\" as \(type == "o" ? "an object path" : type == "g" ? "a signature" : "a string")") }
    }

    static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) throws(BusError) {
        switch value {
        case let .byte(v): try appendBasic("y", v, &iterator)
        case let .boolean(v): try appendBasic("b", dbus_bool_t(v ? 1 : 0), &iterator)
        case let .int16(v): try appendBasic("n", v, &iterator)
        case let .uint16(v): try appendBasic("q", v, &iterator)
        case let .int32(v): try appendBasic("i", v, &iterator)
        case let .uint32(v): try appendBasic("u", v, &iterator)
        case let .int64(v): try appendBasic("x", v, &iterator)
        case let .uint64(v): try appendBasic("t", v, &iterator)
        case let .double(v): try appendBasic("d", v, &iterator)
        case let .unixFD(v): try appendBasic("h", v, &iterator)
        case let .string(v): try appendString("s", v, &iterator)
        case let .objectPath(v):
            guard dbus_validate_path(v, nil) != 0 else { throw BusError(name: BusError.invalidArgs, message: "\"\(v)\" is not a valid object path") }
            try appendString("o", v, &iterator)
        case let .signature(v):
            guard dbus_signature_validate(v, nil) != 0 else { throw BusError(name: BusError.invalidArgs, message: "\"\(v)\" is not a valid signature") }
            try appendString("g", v, &iterator)
        case let .array(element, items):
            try container("a", element, &iterator) { (sub: inout DBusMessageIter) throws(BusError) in
                for item in items {
                    guard item.signature == element else {
                        throw BusError(name: BusError.invalidArgs, message: "array of \(element) holds a \(item.signature)")
                    }
                    try append(item, to: &sub)
                }
            }
        case let .dictionary(keyType, valueType, entries):
            try container("a", "{" + keyType + valueType + "}", &iterator) { (sub: inout DBusMessageIter) throws(BusError) in
                for entry in entries {
                    guard entry.key.signature == keyType, entry.value.signature == valueType else {
                        throw BusError(name: BusError.invalidArgs, message: "dictionary {\(keyType)\(valueType)} holds {\(entry.key.signature)\(entry.value.signature)}")
                    }
                    try container("e", nil, &sub) { (pair: inout DBusMessageIter) throws(BusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case let .structure(fields):
            try container("r", nil, &iterator) { (sub: inout DBusMessageIter) throws(BusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case let .variant(inner):
            try container("v", inner.signature, &iterator) { (sub: inout DBusMessageIter) throws(BusError) in try append(inner, to: &sub) }
        }
    }

    private static func container(_ type: Character, _ contained: String?, _ iterator: inout DBusMessageIter,
                                  _ body: (inout DBusMessageIter) throws(BusError) -> Void) throws(BusError) {
        if let contained, dbus_signature_validate_single(type == "a" ? "a" + contained : contained, nil) == 0 {
            throw BusError(name: BusError.invalidArgs, message: "\"\(contained)\" is not a valid element signature")
        }
        var sub = DBusMessageIter()
        let opened = (contained ?? "").withCString { signature in
            dbus_message_iter_open_container(&iterator, code(type), contained == nil ? nil : signature, &sub)
        }
        guard opened != 0 else { throw BusError.outOfMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &sub) != 0 else { throw BusError.outOfMemory }
    }

    static func read(_ iterator: inout DBusMessageIter) throws(BusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        func basic<T>(_ initial: T) -> T {
            var value = initial
            withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
            return value
        }
        func text() -> String {
            var pointer: UnsafePointer<CChar>?
            withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
            return pointer.map { String(cString: $0) } ?? ""
        }
        switch type {
        case code("y"): return .byte(basic(UInt8(0)))
        case code("b"): return .boolean(basic(dbus_bool_t(0)) != 0)
        case code("n"): return .int16(basic(Int16(0)))
        case code("q"): return .uint16(basic(UInt16(0)))
        case code("i"): return .int32(basic(Int32(0)))
        case code("u"): return .uint32(basic(UInt32(0)))
        case code("x"): return .int64(basic(Int64(0)))
        case code("t"): return .uint64(basic(UInt64(0)))
        case code("d"): return .double(basic(Double(0)))
        case code("h"): return .unixFD(basic(Int32(-1)))
        case code("s"): return .string(text())
        case code("o"): return .objectPath(text())
        case code("g"): return .signature(text())
        case code("v"):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(try read(&sub))
        case code("r"):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                fields.append(try read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case code("a"):
            let element = signature(of: &iterator).dropFirst()
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            if element.hasPrefix("{") {
                let inner = String(element.dropFirst().dropLast())
                var entries: [DBusDictEntry] = []
                var keyType = String(inner.prefix(1)), valueType = String(inner.dropFirst())
                while dbus_message_iter_get_arg_type(&sub) == code("e") {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let key = try read(&pair)
                    dbus_message_iter_next(&pair)
                    let value = try read(&pair)
                    keyType = key.signature
                    if case .variant = value { valueType = "v" }
                    entries.append(DBusDictEntry(key: key, value: value))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: keyType, value: valueType, entries)
            }
            var items: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                items.append(try read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .array(element: String(element), items)
        default:
            throw BusError(name: BusError.invalidSignature, message: "unsupported D-Bus type code \(type)")
        }
    }

    private static func signature(of iterator: inout DBusMessageIter) -> String {
        guard let pointer = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(pointer) }
        return String(cString: pointer)
    }
}
