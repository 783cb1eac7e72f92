import Foundation
import TSBlueZ
import TSDBus
import TSProtocol

/// The simulated watch as a real BlueZ peripheral: a GATT application with the wire protocol's
/// service (GattManager1.RegisterApplication) and an LE advertisement carrying its UUID
/// (LEAdvertisingManager1.RegisterAdvertisement). Writes from a central feed the simulator; its
/// notifications become Value changes of the notify characteristic.
public final class SimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/simulator"
    static let servicePath = applicationPath + "/service0"
    static let writePath = servicePath + "/char0"
    static let notifyPath = servicePath + "/char1"
    static let advertisementPath = applicationPath + "/advertisement0"

    let bluez: BlueZ
    let simulator: SimulatedWatch
    public let adapter: AdapterInfo
    let name: String
    private let lock = NSLock()
    private var notifying = false

    public init(bluez: BlueZ, simulator: SimulatedWatch, adapter: AdapterInfo, name: String = "TS-Sim W10") {
        self.bluez = bluez
        self.simulator = simulator
        self.adapter = adapter
        self.name = name
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start(mtu: Int = 247) async throws {
        let bus = bluez.bus
        let simulator = self.simulator
        let attMTU = (try? ATTMTU(mtu)) ?? .default
        bus.exportObjectManager(at: Self.applicationPath)
        try bus.export(path: Self.servicePath, interfaces: [DBusInterface("org.bluez.GattService1", properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.service) }), DBusProperty("Primary", "b", get: { .boolean(true) }),
        ])])
        try bus.export(path: Self.writePath, interfaces: [DBusInterface("org.bluez.GattCharacteristic1", methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { arguments, _ in
                await simulator.centralWrote(arguments[0].byteArrayValue ?? [])
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.writeCharacteristic) }),
            DBusProperty("Service", "o", get: { .objectPath(Self.servicePath) }),
            DBusProperty("Flags", "as", get: { .strings(["write", "write-without-response"]) }),
        ])])
        try bus.export(path: Self.notifyPath, interfaces: [DBusInterface("org.bluez.GattCharacteristic1", methods: [
            DBusMethod("StartNotify") { [weak self] _, _ in
                self?.setNotifying(true)
                await simulator.centralConnected(mtu: attMTU) { chunk in
                    try? bus.emitPropertiesChanged(path: Self.notifyPath, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes(chunk)])
                }
                return []
            },
            DBusMethod("StopNotify") { [weak self] _, _ in
                self?.setNotifying(false)
                await simulator.centralDisconnected()
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.notifyCharacteristic) }),
            DBusProperty("Service", "o", get: { .objectPath(Self.servicePath) }),
            DBusProperty("Flags", "as", get: { .strings(["notify"]) }),
            DBusProperty("Notifying", "b", get: { [weak self] in .boolean(self?.isNotifying ?? false) }),
        ])])
        let name = self.name
        try bus.export(path: Self.advertisementPath, interfaces: [DBusInterface("org.bluez.LEAdvertisement1", methods: [
            DBusMethod("Release") { _, _ in [] },
        ], properties: [
            DBusProperty("Type", "s", get: { .string("peripheral") }),
            DBusProperty("ServiceUUIDs", "as", get: { .strings([WatchGATT.service]) }),
            DBusProperty("LocalName", "s", get: { .string(name) }),
            DBusProperty("Discoverable", "b", get: { .boolean(true) }),
        ])])
        do {
            _ = try await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.GattManager1", member: "RegisterApplication",
                                   [.objectPath(Self.applicationPath), .properties([:])], timeout: .seconds(10))
            _ = try await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
                                   [.objectPath(Self.advertisementPath), .properties([:])], timeout: .seconds(10))
        } catch let error as BusError {
            throw BlueZError.from(error, adapter: adapter.name)
        }
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        let bus = bluez.bus
        _ = try? await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.LEAdvertisingManager1", member: "UnregisterAdvertisement",
                                [.objectPath(Self.advertisementPath)], timeout: .seconds(5))
        _ = try? await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.GattManager1", member: "UnregisterApplication",
                                [.objectPath(Self.applicationPath)], timeout: .seconds(5))
        for path in [Self.advertisementPath, Self.notifyPath, Self.writePath, Self.servicePath] { bus.unexport(path: path) }
    }

    private func setNotifying(_ on: Bool) { lock.lock(); notifying = on; lock.unlock() }
    var isNotifying: Bool { lock.lock(); defer { lock.unlock() }; return notifying }
}
