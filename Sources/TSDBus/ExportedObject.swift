import CDBus
import Foundation

/// Who called an exported method.
public struct DBusCallInfo: Sendable {
    public var sender: String
    public var path: String
}

public struct DBusMethod: Sendable {
    public var name: String
    public var inSignature: String
    public var outSignature: String
    public var handler: @Sendable ([DBusValue], DBusCallInfo) async throws -> [DBusValue]
    /// Argument names for introspection (optional).
    public var inNames: [String]
    public var outNames: [String]
    /// nil: each call is handled in a task of its own, concurrently with any other; else the
    /// calls of every method on this queue are handled one after another in arrival order.
    public var queue: DBusCallQueue?

    public init(_ name: String, in inSignature: String = "", out outSignature: String = "",
                names inNames: [String] = [], results outNames: [String] = [], inArrivalOrderOn queue: DBusCallQueue? = nil,
                _ handler: @escaping @Sendable ([DBusValue], DBusCallInfo) async throws -> [DBusValue]) {
        self.name = name
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.inNames = inNames
        self.outNames = outNames
        self.queue = queue
        self.handler = handler
    }
}

public struct DBusProperty: Sendable {
    public var name: String
    public var signature: String
    /// nil: the property has no value now; GetAll leaves it out and Get fails (as BlueZ does
    /// for values it has not learnt yet), so no sentinel such as −1 stands in for "unknown".
    public var get: @Sendable () -> DBusValue?
    public var set: (@Sendable (DBusValue) throws -> Void)?

    public init(_ name: String, _ signature: String, get: @escaping @Sendable () -> DBusValue, set: (@Sendable (DBusValue) throws -> Void)? = nil) {
        self.name = name
        self.signature = signature
        self.get = { get() }
        self.set = set
    }

    /// A read-only property that may have no value.
    public init(_ name: String, _ signature: String, optional get: @escaping @Sendable () -> DBusValue?) {
        self.name = name
        self.signature = signature
        self.get = get
        self.set = nil
    }
}

/// One interface of an exported object.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    /// Signal names and signatures, for introspection.
    public var signals: [(name: String, signature: String)]
    /// Signal argument names for introspection (optional), by signal name.
    public var signalArgumentNames: [String: [String]]

    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [(name: String, signature: String)] = [],
                signalArgumentNames: [String: [String]] = [:]) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.signalArgumentNames = signalArgumentNames
    }

    func currentProperties() -> DBusProperties {
        Dictionary(uniqueKeysWithValues: properties.compactMap { property in property.get().map { (property.name, $0) } })
    }
}

struct ExportedObjects {
    var objects: [String: [DBusInterface]] = [:]
    /// Paths that answer org.freedesktop.DBus.ObjectManager for the objects below them.
    var managers: Set<String> = []

    func manager(for path: String) -> String? {
        managers.filter { $0 == "/" || path.hasPrefix($0 + "/") }.max { $0.count < $1.count }
    }

    /// Answers a method call for an exported path; false when the path is not ours.
    static func handle(_ message: DBusMessage, router: MessageRouter, connection: BusConnection) -> Bool {
        let path = message.path ?? "/", interfaceName = message.interface, member = message.member ?? ""
        let snapshot = router.objects.withLock { $0 }
        let info = DBusCallInfo(sender: message.sender ?? "", path: path)
        @Sendable func reply(_ values: [DBusValue]) {
            guard let answer = message.methodReturn() else { return }
            do { try answer.append(values) } catch { return fail(error) }
            connection.sendOneWay(answer)
        }
        @Sendable func fail(_ error: BusError) {
            if let answer = message.errorReply(error) { connection.sendOneWay(answer) }
        }
        let arguments = (try? message.arguments()) ?? []

        switch (interfaceName, member) {
        case (StandardBusNames.introspectable, "Introspect"):
            reply([.string(Introspection.xml(for: path, in: snapshot))])
            return true
        case (StandardBusNames.peer, "Ping"):
            reply([])
            return true
        case (StandardBusNames.objectManager, "GetManagedObjects") where snapshot.managers.contains(path):
            let below = snapshot.objects.filter { $0.key != path && (path == "/" || $0.key.hasPrefix(path + "/")) }
            reply([ManagedObjects.value(below)])
            return true
        default:
            break
        }
        guard let interfaces = snapshot.objects[path] else { return false }
        if interfaceName == StandardBusNames.properties {
            handleProperties(member, arguments, message.signature, interfaces, reply: reply, fail: fail, connection: connection, path: path)
            return true
        }
        let candidates = interfaces.filter { interfaceName == nil || $0.name == interfaceName }
        guard let method = candidates.lazy.flatMap(\.methods).first(where: { $0.name == member }) else {
            fail(BusError(name: BusError.unknownMethod, message: "no method \(interfaceName ?? "").\(member) on \(path)"))
            return true
        }
        guard message.signature == method.inSignature else {
            fail(BusError(name: BusError.invalidArgs, message: "\(member) takes arguments of signature \"\(method.inSignature)\", got \"\(message.signature)\""))
            return true
        }
        let call: @Sendable () async -> Void = {
            do {
                let values = try await method.handler(arguments, info)
                let signature = values.map(\.signature).joined()
                guard signature == method.outSignature else {
                    fail(BusError(name: BusError.failed, message: "\(member) produced \"\(signature)\" instead of \"\(method.outSignature)\""))
                    return
                }
                reply(values)
            } catch let error as BusError {
                fail(error)
            } catch {
                fail(BusError(name: BusError.failed, message: String(describing: error)))
            }
        }
        if let queue = method.queue { queue.enqueue(call) } else { Task { await call() } }
        return true
    }

    private static func handleProperties(_ member: String, _ arguments: [DBusValue], _ signature: String, _ interfaces: [DBusInterface],
                                         reply: ([DBusValue]) -> Void, fail: (BusError) -> Void, connection: BusConnection, path: String) {
        let interfaceName = arguments.first?.stringValue ?? ""
        let interface = interfaces.first { $0.name == interfaceName }
        switch (member, signature) {
        case ("GetAll", "s"):
            reply([.properties(interface?.currentProperties() ?? [:])])
        case ("Get", "ss"):
            let name = arguments[1].stringValue ?? ""
            guard let property = interface?.properties.first(where: { $0.name == name }) else {
                return fail(BusError(name: BusError.unknownProperty, message: "no property \(interfaceName).\(name) on \(path)"))
            }
            guard let value = property.get() else {
                return fail(BusError(name: BusError.failed, message: "\(interfaceName).\(name) has no value yet"))
            }
            reply([.variant(value)])
        case ("Set", "ssv"):
            let name = arguments[1].stringValue ?? ""
            guard let property = interface?.properties.first(where: { $0.name == name }) else {
                return fail(BusError(name: BusError.unknownProperty, message: "no property \(interfaceName).\(name) on \(path)"))
            }
            guard let setter = property.set else {
                return fail(BusError(name: BusError.propertyReadOnly, message: "\(interfaceName).\(name) is read-only"))
            }
            let value = arguments[2].unwrapped
            guard value.signature == property.signature else {
                return fail(BusError(name: BusError.invalidArgs, message: "\(name) is of type \(property.signature), got \(value.signature)"))
            }
            do {
                try setter(value)
                reply([])
                try? connection.emitPropertiesChanged(path: path, interface: interfaceName, changed: [name: value])
            } catch let error as BusError {
                fail(error)
            } catch {
                fail(BusError(name: BusError.failed, message: String(describing: error)))
            }
        default:
            fail(BusError(name: BusError.invalidArgs, message: "Properties.\(member) with signature \"\(signature)\" is not a valid call"))
        }
    }
}

enum ManagedObjects {
    /// `a{oa{sa{sv}}}` of the given objects.
    static func value(_ objects: [String: [DBusInterface]]) -> DBusValue {
        .dictionary(key: "o", value: "a{sa{sv}}", objects.sorted { $0.key < $1.key }.map { path, interfaces in
            DBusDictEntry(key: .objectPath(path), value: interfacesValue(interfaces))
        })
    }

    static func interfacesValue(_ interfaces: [DBusInterface]) -> DBusValue {
        .dictionary(key: "s", value: "a{sv}", interfaces.map { DBusDictEntry(key: .string($0.name), value: .properties($0.currentProperties())) })
    }
}

extension BusConnection {
    /// Publishes an object. If an object manager covers the path, InterfacesAdded is emitted.
    public func export(path: String, interfaces: [DBusInterface]) throws(BusError) {
        guard dbus_validate_path(path, nil) != 0 else { throw BusError(name: BusError.invalidArgs, message: "\"\(path)\" is not a valid object path") }
        let manager = router.objects.withLock { objects -> String? in
            objects.objects[path] = interfaces
            return objects.manager(for: path)
        }
        if let manager {
            try emitSignal(path: manager, interface: StandardBusNames.objectManager, member: "InterfacesAdded",
                           [.objectPath(path), ManagedObjects.interfacesValue(interfaces)])
        }
    }

    /// Withdraws an object (InterfacesRemoved under an object manager).
    public func unexport(path: String) {
        let (removed, manager) = router.objects.withLock { objects in
            (objects.objects.removeValue(forKey: path), objects.manager(for: path))
        }
        if let removed, let manager {
            try? emitSignal(path: manager, interface: StandardBusNames.objectManager, member: "InterfacesRemoved",
                            [.objectPath(path), .strings(removed.map(\.name))])
        }
    }

    /// Makes `path` answer GetManagedObjects for the objects exported below it.
    public func exportObjectManager(at path: String) {
        router.objects.withLock { _ = $0.managers.insert(path) }
    }

    public func emitPropertiesChanged(path: String, interface: String, changed: DBusProperties, invalidated: [String] = []) throws(BusError) {
        try emitSignal(path: path, interface: StandardBusNames.properties, member: "PropertiesChanged",
                       [.string(interface), .properties(changed), .strings(invalidated)])
    }
}
