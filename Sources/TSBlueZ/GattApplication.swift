import Foundation
import TSDBus

/// What BlueZ passes with a WriteValue to a characteristic this process serves.
public struct GattWriteOptions: Sendable, Hashable {
    /// "command" (write without response), "request" or "reliable"; nil when not given.
    public var type: String?
    /// The link's ATT MTU, when BlueZ reports it.
    public var mtu: Int?
    /// The central that wrote, when BlueZ says.
    public var device: DeviceHandle?

    init(_ options: DBusProperties) {
        type = options["type"]?.stringValue
        mtu = options["mtu"]?.uint16Value.map(Int.init)
        device = options["device"]?.objectPathValue.map(DeviceHandle.init(path:))
    }
}

/// A characteristic this process serves (the server side of org.bluez.GattCharacteristic1).
/// Only the handlers given become methods, so BlueZ falls back to its own behaviour for the
/// rest (no AcquireNotify: BlueZ calls StartNotify and forwards Value changes).
public struct LocalGattCharacteristic: Sendable {
    public var uuid: String
    /// BlueZ's flags: "read", "write", "write-without-response", "notify", …
    public var flags: [String]
    public var read: (@Sendable () async throws -> [UInt8])?
    public var write: (@Sendable ([UInt8], GattWriteOptions) async throws -> Void)?
    public var startNotify: (@Sendable () async -> Void)?
    public var stopNotify: (@Sendable () async -> Void)?

    public init(uuid: String, flags: [String], read: (@Sendable () async throws -> [UInt8])? = nil,
                write: (@Sendable ([UInt8], GattWriteOptions) async throws -> Void)? = nil,
                startNotify: (@Sendable () async -> Void)? = nil, stopNotify: (@Sendable () async -> Void)? = nil) {
        self.uuid = uuid
        self.flags = flags
        self.read = read
        self.write = write
        self.startNotify = startNotify
        self.stopNotify = stopNotify
    }

    var notifies: Bool { flags.contains("notify") || flags.contains("indicate") }
}

/// A service this process serves (the server side of org.bluez.GattService1).
public struct LocalGattService: Sendable {
    public var uuid: String
    public var primary: Bool
    public var characteristics: [LocalGattCharacteristic]

    public init(uuid: String, primary: Bool = true, characteristics: [LocalGattCharacteristic]) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }
}

/// A GATT application for GattManager1.RegisterApplication: an ObjectManager at `path` with
/// service N at `path/serviceN` and its characteristic M at `path/serviceN/charM`. It tracks
/// which characteristics a central subscribed to (their Notifying property).
public final class GattApplication: @unchecked Sendable {
    public let path: String
    public let services: [LocalGattService]
    private let lock = NSLock()
    private var notifying: Set<String> = []
    /// Reads and writes, handled in the order bluetoothd sent them, as a device handles a link's
    /// ATT operations: bluetoothd passes a write without response on without waiting, and a
    /// read right behind it was answered first now and then (miband2 writes the Current Time
    /// without response and reads it back at once: CI after stop 43, att, read the old clock).
    private let calls = DBusCallQueue()

    public init(path: String, services: [LocalGattService]) {
        self.path = path
        self.services = services
    }

    func servicePath(_ index: Int) -> String { path + "/service\(index)" }

    /// The object path of the first characteristic with `uuid`.
    public func characteristicPath(uuid: String) -> String? {
        for (serviceIndex, service) in services.enumerated() {
            if let index = service.characteristics.firstIndex(where: { $0.uuid == uuid }) { return servicePath(serviceIndex) + "/char\(index)" }
        }
        return nil
    }

    /// Every object with its interfaces, services before their characteristics.
    var objects: [(path: String, interface: DBusInterface)] {
        services.enumerated().flatMap { serviceIndex, service in
            let servicePath = servicePath(serviceIndex)
            let serviceObject = DBusInterface(BlueZInterface.gattService, properties: [
                DBusProperty("UUID", "s", get: { .string(service.uuid) }), DBusProperty("Primary", "b", get: { .boolean(service.primary) }),
            ])
            return [(servicePath, serviceObject)] + service.characteristics.enumerated().map { index, characteristic in
                (servicePath + "/char\(index)", interface(for: characteristic, at: servicePath + "/char\(index)", service: servicePath))
            }
        }
    }

    private func interface(for characteristic: LocalGattCharacteristic, at path: String, service: String) -> DBusInterface {
        var methods: [DBusMethod] = []
        if let read = characteristic.read {
            methods.append(DBusMethod("ReadValue", in: "a{sv}", out: "ay", inArrivalOrderOn: calls) { arguments, _ in
                // A long value is read in parts (ATT Read Blob): BlueZ asks from an offset.
                let offset = Int(arguments.first?.propertiesValue?["offset"]?.uint16Value ?? 0)
                let value = try await read()
                guard offset <= value.count else {
                    throw BusError(name: BlueZErrorName.invalidOffset, message: "offset \(offset) is past the value's \(value.count) bytes")
                }
                return [.bytes(Array(value[offset...]))]
            })
        }
        if let write = characteristic.write {
            methods.append(DBusMethod("WriteValue", in: "aya{sv}", inArrivalOrderOn: calls) { arguments, _ in
                let options = arguments.count > 1 ? arguments[1].propertiesValue ?? [:] : [:]
                try await write(arguments[0].byteArrayValue ?? [], GattWriteOptions(options))
                return []
            })
        }
        if characteristic.notifies {
            methods.append(DBusMethod("StartNotify") { [weak self] _, _ in
                self?.setNotifying(true, path: path)
                await characteristic.startNotify?()
                return []
            })
            methods.append(DBusMethod("StopNotify") { [weak self] _, _ in
                self?.setNotifying(false, path: path)
                await characteristic.stopNotify?()
                return []
            })
        }
        var properties = [
            DBusProperty("UUID", "s", get: { .string(characteristic.uuid) }),
            DBusProperty("Service", "o", get: { .objectPath(service) }),
            DBusProperty("Flags", "as", get: { .strings(characteristic.flags) }),
        ]
        if characteristic.notifies {
            properties.append(DBusProperty("Notifying", "b", get: { [weak self] in .boolean(self?.isNotifying(path: path) ?? false) }))
        }
        return DBusInterface(BlueZInterface.gattCharacteristic, methods: methods, properties: properties)
    }

    private func setNotifying(_ on: Bool, path: String) {
        lock.withLock {
            if on { notifying.insert(path) } else { notifying.remove(path) }
        }
    }

    private func isNotifying(path: String) -> Bool { lock.withLock { notifying.contains(path) } }
}

extension BlueZ {
    /// Publishes the application's objects under its ObjectManager (before registering it).
    public func export(_ application: GattApplication) throws(BusError) {
        bus.exportObjectManager(at: application.path)
        for object in application.objects { try bus.export(path: object.path, interfaces: [object.interface]) }
    }

    /// Withdraws the application's objects, characteristics before their services.
    public func unexport(_ application: GattApplication) {
        for object in application.objects.reversed() { bus.unexport(path: object.path) }
    }

    /// GattManager1.RegisterApplication: bluetoothd reads the objects back and serves them.
    /// AlreadyExists counts as done: a retry after a half-finished registration meets the half
    /// that went through.
    public func register(_ application: GattApplication, adapter: AdapterInfo) async throws {
        try await registerObject(application.path, with: BlueZInterface.gattManager, member: "RegisterApplication", adapter: adapter)
    }

    public func unregister(_ application: GattApplication, adapter: AdapterInfo) async throws {
        try await unregisterObject(application.path, with: BlueZInterface.gattManager, member: "UnregisterApplication", adapter: adapter)
    }

    /// `Register…(path, {})` on one of the adapter's managers, AlreadyExists counting as done.
    func registerObject(_ path: String, with manager: String, member: String, adapter: AdapterInfo) async throws {
        do {
            _ = try await bus.call(destination: Self.service, path: adapter.path, interface: manager, member: member,
                                   [.objectPath(path), .properties([:])], timeout: .seconds(10))
        } catch let error as BusError where error.name == BlueZErrorName.alreadyExists {
            return
        } catch let error as BusError {
            throw BlueZError.from(error, adapter: adapter.name)
        }
    }

    func unregisterObject(_ path: String, with manager: String, member: String, adapter: AdapterInfo) async throws {
        do {
            _ = try await bus.call(destination: Self.service, path: adapter.path, interface: manager, member: member, [.objectPath(path)], timeout: BlueZ.replyTimeout)
        } catch let error as BusError {
            throw BlueZError.from(error, adapter: adapter.name)
        }
    }

    /// Sends `value` to subscribed centrals: a Value change of the characteristic at `path`,
    /// which bluetoothd turns into a notification.
    public func notify(_ value: [UInt8], characteristicAt path: String) throws(BusError) {
        try bus.emitPropertiesChanged(path: path, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(value)])
    }
}
