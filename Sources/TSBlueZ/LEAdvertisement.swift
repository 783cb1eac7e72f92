import TSDBus

/// An LE advertisement for LEAdvertisingManager1.RegisterAdvertisement (org.bluez.LEAdvertisement1
/// at `path`). Properties left nil are not exported, so BlueZ uses its defaults.
public struct LEAdvertisement: Sendable {
    public enum Kind: String, Sendable {
        case peripheral, broadcast
    }

    public var path: String
    public var kind: Kind
    public var serviceUUIDs: [String]
    public var localName: String?
    public var discoverable: Bool?

    public init(path: String, kind: Kind = .peripheral, serviceUUIDs: [String], localName: String? = nil, discoverable: Bool? = nil) {
        self.path = path
        self.kind = kind
        self.serviceUUIDs = serviceUUIDs
        self.localName = localName
        self.discoverable = discoverable
    }

    var interface: DBusInterface {
        var properties = [
            DBusProperty("Type", "s", get: { [kind] in .string(kind.rawValue) }),
            DBusProperty("ServiceUUIDs", "as", get: { [serviceUUIDs] in .strings(serviceUUIDs) }),
        ]
        if let localName { properties.append(DBusProperty("LocalName", "s", get: { .string(localName) })) }
        if let discoverable { properties.append(DBusProperty("Discoverable", "b", get: { .boolean(discoverable) })) }
        return DBusInterface(BlueZInterface.leAdvertisement, methods: [DBusMethod("Release") { _, _ in [] }], properties: properties)
    }
}

extension BlueZ {
    public func export(_ advertisement: LEAdvertisement) throws(BusError) {
        try bus.export(path: advertisement.path, interfaces: [advertisement.interface])
    }

    public func unexport(_ advertisement: LEAdvertisement) {
        bus.unexport(path: advertisement.path)
    }

    /// LEAdvertisingManager1.RegisterAdvertisement: bluetoothd reads the properties back and
    /// advertises them. AlreadyExists counts as done, as for applications.
    public func register(_ advertisement: LEAdvertisement, adapter: AdapterInfo) async throws {
        try await registerObject(advertisement.path, with: BlueZInterface.leAdvertisingManager, member: "RegisterAdvertisement", adapter: adapter)
    }

    public func unregister(_ advertisement: LEAdvertisement, adapter: AdapterInfo) async throws {
        try await unregisterObject(advertisement.path, with: BlueZInterface.leAdvertisingManager, member: "UnregisterAdvertisement", adapter: adapter)
    }
}
