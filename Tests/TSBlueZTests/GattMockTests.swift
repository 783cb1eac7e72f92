import TSTestSupport
import Foundation
import Testing
import TSBlueZ
@testable import TSDBus

/// A fake bluetoothd exported with the project's own D-Bus layer: an adapter, a device, the
/// watch service with a write and a notify characteristic (MTU 247) and a third characteristic
/// without an MTU property.
final class FakeGattBlueZ: @unchecked Sendable {
    let bus: PrivateBus
    let server: BusConnection
    let lock = NSLock()
    private var writes: [(bytes: [UInt8], type: String)] = []
    private var notifying = false
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    static let service = "54530001-6777-4e3b-9c2a-7473676174e5"
    static let write = "54530002-6777-4e3b-9c2a-7473676174e5"
    static let notify = "54530003-6777-4e3b-9c2a-7473676174e5"

    /// The test's end of the socket handed out by AcquireNotify (when offered).
    private(set) var acquiredPeer: Int32 = -1

    init(offerAcquireNotify: Bool = false) async throws {
        bus = try PrivateBus()
        server = try BusConnection(.address(bus.address))
        try await server.requestName(BlueZ.service)
        server.exportObjectManager(at: "/")
        try server.export(path: "/org/bluez/hci0", interfaces: [DBusInterface(BlueZInterface.adapter, properties: [
            DBusProperty("Address", "s", get: { .string("00:11:22:33:44:55") }), DBusProperty("Powered", "b", get: { .boolean(true) }),
        ])])
        try server.export(path: Self.device, interfaces: [DBusInterface(BlueZInterface.device, properties: [
            DBusProperty("Address", "s", get: { .string("AA:BB:CC:DD:EE:01") }), DBusProperty("Connected", "b", get: { .boolean(true) }),
            DBusProperty("ServicesResolved", "b", get: { .boolean(true) }),
        ])])
        try server.export(path: Self.device + "/service0010", interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
            DBusProperty("UUID", "s", get: { .string(Self.service) }), DBusProperty("Primary", "b", get: { .boolean(true) }),
        ])])
        let servicePath = DBusValue.objectPath(Self.device + "/service0010")
        try server.export(path: Self.device + "/service0010/char0011", interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { [weak self] arguments, _ in
                let type = arguments[1].propertiesValue?["type"]?.stringValue ?? ""
                self?.record(arguments[0].byteArrayValue ?? [], type)
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(Self.write.uppercased()) }), DBusProperty("Service", "o", get: { servicePath }),
            DBusProperty("Flags", "as", get: { .strings(["write", "write-without-response"]) }), DBusProperty("MTU", "q", get: { .uint16(247) }),
        ])])
        try server.export(path: Self.device + "/service0010/char0013", interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("StartNotify") { [weak self] _, _ in self?.setNotifying(true); return [] },
            DBusMethod("StopNotify") { [weak self] _, _ in self?.setNotifying(false); return [] },
            DBusMethod("ReadValue", in: "a{sv}", out: "ay") { _, _ in [.bytes([1, 2, 3])] },
        ] + (offerAcquireNotify ? [DBusMethod("AcquireNotify", in: "a{sv}", out: "hq") { [weak self] _, _ in
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else { throw BusError(name: BusError.failed, message: "socketpair") }
            // bluetoothd hands out the non-blocking end it made; its own end is served by a thread here.
            _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) & ~O_NONBLOCK)
            self?.setPeer(pair[1])
            return [.unixFD(pair[0]), .uint16(247)]
        }] : []), properties: [
            DBusProperty("UUID", "s", get: { .string(Self.notify) }), DBusProperty("Service", "o", get: { servicePath }),
            DBusProperty("Flags", "as", get: { .strings(["notify", "read"]) }),
        ])])
    }

    private func setPeer(_ fd: Int32) { lock.lock(); acquiredPeer = fd; lock.unlock() }
    var peer: Int32 { lock.lock(); defer { lock.unlock() }; return acquiredPeer }

    private func record(_ bytes: [UInt8], _ type: String) { lock.lock(); writes.append((bytes, type)); lock.unlock() }
    private func setNotifying(_ on: Bool) { lock.lock(); notifying = on; lock.unlock() }
    var recordedWrites: [(bytes: [UInt8], type: String)] { lock.lock(); defer { lock.unlock() }; return writes }
    var isNotifying: Bool { lock.lock(); defer { lock.unlock() }; return notifying }

    /// A notification: BlueZ reports it as a change of the characteristic's Value.
    func notify(_ bytes: [UInt8]) throws {
        try server.emitPropertiesChanged(path: Self.device + "/service0010/char0013", interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(bytes)])
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

@Suite struct GattMockTests {
    @Test func characteristicsAreFoundByServiceAndUUIDWithTheirMTU() async throws {
        let fake = try await FakeGattBlueZ(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let device = try await bluez.device(address: "AA:BB:CC:DD:EE:01", adapter: try await bluez.adapter("hci0"))
        let write = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.write)
        #expect(write.mtu == 247)
        #expect(write.flags.contains("write-without-response"))
        let notify = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.notify)
        #expect(notify.mtu == 23, "no MTU property means the ATT default")
        await #expect { _ = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: "0000ffff-0000-1000-8000-00805f9b34fb") } throws: {
            "\($0)".contains("has no characteristic 0000ffff")
        }
    }

    @Test func writesCarryTheirTypeAndNotificationsArriveOnceEach() async throws {
        let fake = try await FakeGattBlueZ(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let device = try await bluez.device(address: "AA:BB:CC:DD:EE:01", adapter: try await bluez.adapter("hci0"))
        let write = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.write)
        try await bluez.write([0xA5, 0x01], to: write, withResponse: false)
        try await bluez.write([0x02], to: write, withResponse: true)
        #expect(fake.recordedWrites.map(\.bytes) == [[0xA5, 0x01], [0x02]])
        #expect(fake.recordedWrites.map(\.type) == ["command", "request"])

        let notify = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.notify)
        #expect(try await bluez.read(notify) == [1, 2, 3])
        var values = try await bluez.notifications(of: notify).makeAsyncIterator()
        #expect(fake.isNotifying)
        try fake.notify([0x10])
        try fake.notify([0x20, 0x21])
        #expect(await values.next() == [0x10])
        #expect(await values.next() == [0x20, 0x21])
    }

    @Test func acquireNotifyIsUsedWhereOfferedAndSignalsOtherwise() async throws {
        let fake = try await FakeGattBlueZ(offerAcquireNotify: true); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let device = try await bluez.device(address: "AA:BB:CC:DD:EE:01", adapter: try await bluez.adapter("hci0"))
        let notify = try await bluez.characteristic(of: device, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.notify)
        var values = try await bluez.acquiredOrSignalledNotifications(of: notify).makeAsyncIterator()
        let peer = fake.peer
        #expect(peer >= 0, "AcquireNotify was called")
        #expect(!fake.isNotifying, "no StartNotify when the socket was acquired")
        #expect(write(peer, [UInt8]([0xA5, 0x01]), 2) == 2)
        #expect(write(peer, [UInt8]([0x33]), 1) == 1)
        #expect(await values.next() == [0xA5, 0x01])
        #expect(await values.next() == [0x33])
        close(peer)
        #expect(await values.next() == nil, "the stream ends with the socket")

        let plain = try await FakeGattBlueZ(); defer { plain.stop() }
        let other = BlueZ(bus: try BusConnection(.address(plain.bus.address))); defer { other.bus.close() }
        let otherDevice = try await other.device(address: "AA:BB:CC:DD:EE:01", adapter: try await other.adapter("hci0"))
        let signalled = try await other.characteristic(of: otherDevice, service: FakeGattBlueZ.service, uuid: FakeGattBlueZ.notify)
        var fallback = try await other.acquiredOrSignalledNotifications(of: signalled).makeAsyncIterator()
        #expect(plain.isNotifying, "fell back to StartNotify")
        try plain.notify([0x42])
        #expect(await fallback.next() == [0x42])
    }
}
