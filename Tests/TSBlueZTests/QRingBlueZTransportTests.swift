import Foundation
import TSGATT
import TSQRingWatch
import TSTestSupport
import Synchronization
import Testing
import TSBlueZ
import TSBlueZTransport
import TSDevice
import TSModels
import TSProtocol
import TSQRing
import TSQRingSimulator
import TSTransport
@testable import TSDBus

/// A fake bluetoothd on a private bus with a QRing ring's three services (command pair, big-data
/// pair, Device Information) bridged to the in-process simulated ring.
final class BridgedRing: Sendable {
    let bus: PrivateBus
    let server: BusConnection
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_21"
    static let commandNotify = device + "/service0010/char0013"
    static let bigDataNotify = device + "/service0020/char0023"
    private let bigDataWrites = WriteCounter()
    var bigDataWriteCount: Int { bigDataWrites.count }

    final class WriteCounter: Sendable {
        private let value = Mutex(0)
        var count: Int { value.withLock { $0 } }
        func add() { value.withLock { $0 += 1 } }
    }

    init(ring: SimulatedRing, mtu: UInt16) async throws {
        (bus, server) = try await FakeBluetoothd.start()
        let server = self.server
        try server.export(path: Self.device, interfaces: [DBusInterface(BlueZInterface.device, methods: [
            DBusMethod("Disconnect") { _, _ in [] },
        ], properties: [
            DBusProperty("Address", "s", get: { .string("AA:BB:CC:DD:EE:21") }), DBusProperty("Name", "s", get: { .string("R02_5A1C") }),
            DBusProperty("Connected", "b", get: { .boolean(true) }), DBusProperty("ServicesResolved", "b", get: { .boolean(true) }),
        ])])
        func service(_ path: String, _ uuid: String) throws {
            try server.export(path: Self.device + path, interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
                DBusProperty("UUID", "s", get: { .string(uuid) }),
            ])])
        }
        func characteristic(_ path: String, _ uuid: String, flags: [String], methods: [DBusMethod]) throws {
            let servicePath = DBusValue.objectPath(Self.device + String(path.prefix(12)))
            try server.export(path: Self.device + path, interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: methods, properties: [
                DBusProperty("UUID", "s", get: { .string(uuid) }), DBusProperty("Service", "o", get: { servicePath }),
                DBusProperty("Flags", "as", get: { .strings(flags) }), DBusProperty("MTU", "q", get: { .uint16(mtu) }),
            ])])
        }
        let attMTU = try ATTMTU(Int(mtu))
        try service("/service0010", QRingGATT.commandService)
        try characteristic("/service0010/char0011", QRingGATT.commandWrite, flags: ["write", "write-without-response"], methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { arguments, _ in
                await ring.centralWrote(arguments[0].byteArrayValue ?? [])
                return []
            },
        ])
        try characteristic("/service0010/char0013", QRingGATT.commandNotify, flags: ["notify"], methods: [
            DBusMethod("StartNotify") { _, _ in
                await ring.centralConnected(mtu: attMTU) { chunk in
                    try? server.emitPropertiesChanged(path: BridgedRing.commandNotify, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(chunk)])
                }
                return []
            },
            DBusMethod("StopNotify") { _, _ in await ring.centralDisconnected(); return [] },
        ])
        try service("/service0020", QRingGATT.bigDataService)
        let writes = bigDataWrites
        try characteristic("/service0020/char0021", QRingGATT.bigDataWrite, flags: ["write", "write-without-response"], methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { arguments, _ in
                writes.add()
                await ring.centralWroteSecondChannel(arguments[0].byteArrayValue ?? [])
                return []
            },
        ])
        try characteristic("/service0020/char0023", QRingGATT.bigDataNotify, flags: ["notify"], methods: [
            DBusMethod("StartNotify") { _, _ in
                await ring.centralConnectedSecondChannel { chunk in
                    try? server.emitPropertiesChanged(path: BridgedRing.bigDataNotify, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(chunk)])
                }
                return []
            },
            DBusMethod("StopNotify") { _, _ in [] },
        ])
        try service("/service0030", WatchService.deviceInformation.uuid)
        for (path, characteristicType) in [("/service0030/char0031", StandardCharacteristic.hardwareRevision), ("/service0030/char0033", .firmwareRevision)] {
            try characteristic(path, characteristicType.uuid, flags: ["read"], methods: [
                DBusMethod("ReadValue", in: "a{sv}", out: "ay") { _, _ in [.bytes(try await ring.read(characteristicType))] },
            ])
        }
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

@Suite struct QRingBlueZTransportTests {
    @Test func aRingSyncsThroughBothPairsOverBlueZGATT() async throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let now = Date(timeIntervalSince1970: 1_762_156_800)
        let ring = SimulatedRing(history: RingHistory(seed: 9, timeZone: zone, now: now, days: 3))
        let fake = try await BridgedRing(ring: ring, mtu: 185); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        let transport = BlueZTransport(bluez: bluez, address: "AA:BB:CC:DD:EE:21", adapter: "hci0", profile: .qring)
        let watch = QRingWatch(transport: transport, configuration: configuration)

        let info = try await watch.connect()
        #expect(info.model == "R02_5A1C")
        #expect(info.firmware == "R02_3.00.06_240523")
        #expect(await watch.capabilities.sleepSync != nil, "the big-data pair is open")
        let start = Int64(now.timeIntervalSince1970) - 3 * 86400
        let records = try await watch.allSleepRecords(start: start, end: nil)
        #expect(records == ring.history.nights.flatMap(\.items).filter { $0.start >= start })
        #expect(!records.isEmpty)
        #expect(fake.bigDataWriteCount == 1, "the sleep request went to the big-data pair")
        #expect(await watch.drops.crcMismatches == 0)
        await watch.disconnect()
    }
}
