import TSBlueZ
import TSTestSupport
@testable import TSDBus

/// Pieces every fake bluetoothd of these tests serves.
enum FakeBluetoothd {
    /// A private bus with a connection that owns org.bluez, an ObjectManager at / and hci0.
    static func start() async throws -> (bus: PrivateBus, server: BusConnection) {
        let bus = try PrivateBus()
        let server = try BusConnection(.address(bus.address))
        try await server.requestName(BlueZ.service)
        server.exportObjectManager(at: "/")
        try exportAdapter(on: server)
        return (bus, server)
    }

    /// hci0, powered, with discovery methods that do nothing (the device object is there already).
    static func exportAdapter(on server: BusConnection) throws {
        try server.export(path: "/org/bluez/hci0", interfaces: [DBusInterface(BlueZInterface.adapter, methods: [
            DBusMethod("SetDiscoveryFilter", in: "a{sv}") { _, _ in [] },
            DBusMethod("StartDiscovery") { _, _ in [] },
            DBusMethod("StopDiscovery") { _, _ in [] },
        ], properties: [
            DBusProperty("Address", "s", get: { .string("00:11:22:33:44:55") }), DBusProperty("Powered", "b", get: { .boolean(true) }),
        ])])
    }
}
