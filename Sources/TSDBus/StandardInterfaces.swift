/// Clients of org.freedesktop.DBus.Properties and org.freedesktop.DBus.ObjectManager. Replies
/// whose signature is not the one the interface defines are refused with a typed error.
extension BusConnection {
    public func getProperty(destination: String, path: String, interface: String, name: String, timeout: Duration = .seconds(25)) async throws -> DBusValue {
        let reply = try await call(destination: destination, path: path, interface: StandardBusNames.properties, member: "Get",
                                   [.string(interface), .string(name)], timeout: timeout)
        guard reply.count == 1, case let .variant(value) = reply[0] else {
            throw BusError.unexpectedReply("Properties.Get(\(name))", expected: "v", got: reply.map(\.signature).joined())
        }
        return value
    }

    public func getAllProperties(destination: String, path: String, interface: String, timeout: Duration = .seconds(25)) async throws -> DBusProperties {
        let reply = try await call(destination: destination, path: path, interface: StandardBusNames.properties, member: "GetAll",
                                   [.string(interface)], timeout: timeout)
        guard reply.count == 1, reply[0].signature == "a{sv}", let properties = reply[0].propertiesValue else {
            throw BusError.unexpectedReply("Properties.GetAll(\(interface))", expected: "a{sv}", got: reply.map(\.signature).joined())
        }
        return properties
    }

    public func setProperty(destination: String, path: String, interface: String, name: String, value: DBusValue, timeout: Duration = .seconds(25)) async throws {
        _ = try await call(destination: destination, path: path, interface: StandardBusNames.properties, member: "Set",
                           [.string(interface), .string(name), .variant(value)], timeout: timeout)
    }

    /// path → interface → properties, from GetManagedObjects.
    public func managedObjects(destination: String, path: String = "/", timeout: Duration = .seconds(25)) async throws -> [String: [String: DBusProperties]] {
        let reply = try await call(destination: destination, path: path, interface: StandardBusNames.objectManager,
                                   member: "GetManagedObjects", timeout: timeout)
        guard reply.count == 1, reply[0].signature == "a{oa{sa{sv}}}", let objects = reply[0].managedObjectsValue else {
            throw BusError.unexpectedReply("GetManagedObjects", expected: "a{oa{sa{sv}}}", got: reply.map(\.signature).joined())
        }
        return objects
    }
}
