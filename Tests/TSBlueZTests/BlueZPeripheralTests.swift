import Synchronization
import TSTestSupport
import Foundation
import Testing
import TSBlueZ
@testable import TSDBus

/// TSBlueZ's peripheral side against the fake bluetoothd of SimulatorPeripheralTests.
@Suite struct BlueZPeripheralTests {
    static let service = "54530001-0000-4e3b-9c2a-7473676174e5"
    static let readWrite = "54530002-0000-4e3b-9c2a-7473676174e5"
    static let notify = "54530003-0000-4e3b-9c2a-7473676174e5"

    @Test(.timeLimit(.minutes(1))) func theApplicationServesReadsWritesAndSubscriptionsAndIsRegisteredAgainWhenBluetoothdReturns() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let (writes, wrote) = AsyncStream.makeStream(of: GattWriteOptions.self)
        let application = GattApplication(path: "/org/tsgateway/test", services: [LocalGattService(uuid: Self.service, characteristics: [
            LocalGattCharacteristic(uuid: Self.readWrite, flags: ["read", "write"], read: { [1, 2, 3] }, write: { _, options in wrote.yield(options) }),
            LocalGattCharacteristic(uuid: Self.notify, flags: ["notify"]),
        ])])
        let advertisement = LEAdvertisement(path: "/org/tsgateway/test/advertisement0", serviceUUIDs: [Self.service], localName: "Test")
        let peripheral = BlueZPeripheral(bluez: bluez, adapter: try await bluez.adapter("hci1"), application: application, advertisement: advertisement)
        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        try await peripheral.start { event in
            switch event {
            case .bluetoothdReturned: continuation.yield("returned")
            case .registeredAgain: continuation.yield("registered")
            case let .registeringAgainFailed(error): continuation.yield("failed: \(error)")
            }
        }
        #expect(fake.applicationRegistrations == 1 && fake.advertisementRegistrations == 1)
        #expect(fake.advertisement?["LocalName"]?.stringValue == "Test")
        #expect(fake.advertisement?["Discoverable"] == nil)

        // What bluetoothd read back, and the central's side through it.
        let objects = try #require(fake.application?.objects)
        let sender = try #require(fake.application?.sender)
        let readWritePath = "/org/tsgateway/test/service0/char0", notifyPath = "/org/tsgateway/test/service0/char1"
        #expect(application.characteristicPath(uuid: Self.notify) == notifyPath)
        #expect(objects["/org/tsgateway/test/service0"]?[BlueZInterface.gattService]?["UUID"]?.stringValue == Self.service)
        #expect(objects[readWritePath]?[BlueZInterface.gattCharacteristic]?["Notifying"] == nil)
        #expect(objects[notifyPath]?[BlueZInterface.gattCharacteristic]?["Notifying"]?.boolValue == false)
        let read = try await fake.server.call(destination: sender, path: readWritePath, interface: BlueZInterface.gattCharacteristic, member: "ReadValue", [.properties([:])])
        #expect(read.first?.byteArrayValue == [1, 2, 3])
        // A Read Blob: BlueZ asks for the value from an offset, and one past the end is refused.
        let rest = try await fake.server.call(destination: sender, path: readWritePath, interface: BlueZInterface.gattCharacteristic, member: "ReadValue", [.properties(["offset": .uint16(1)])])
        #expect(rest.first?.byteArrayValue == [2, 3])
        do {
            _ = try await fake.server.call(destination: sender, path: readWritePath, interface: BlueZInterface.gattCharacteristic, member: "ReadValue", [.properties(["offset": .uint16(4)])])
            Issue.record("a read from past the value's end was answered")
        } catch let error as BusError {
            #expect(error.name == BlueZErrorName.invalidOffset)
        }
        _ = try await fake.server.call(destination: sender, path: readWritePath, interface: BlueZInterface.gattCharacteristic, member: "WriteValue",
                                       [.bytes([9]), .properties(["type": .string("request"), "mtu": .uint16(100), "device": .objectPath("/org/bluez/hci1/dev_00_AA_BB_CC_DD_02")])])
        var received = writes.makeAsyncIterator()
        let options = await received.next()
        #expect(options?.type == "request" && options?.mtu == 100 && options?.device?.address == "00:AA:BB:CC:DD:02")
        _ = try await fake.server.call(destination: sender, path: notifyPath, interface: BlueZInterface.gattCharacteristic, member: "StartNotify")
        let notifying = try await fake.server.getProperty(destination: sender, path: notifyPath, interface: BlueZInterface.gattCharacteristic, name: "Notifying")
        #expect(notifying.boolValue == true)

        // bluetoothd restarts; the application's path is still known to it (AlreadyExists counts as registered).
        fake.applicationAlreadyExists = true
        try await fake.restartBluetoothd()
        var heard = events.makeAsyncIterator()
        #expect(await heard.next() == "returned")
        #expect(await heard.next() == "registered")
        #expect(fake.advertisementRegistrations == 2)
        await peripheral.stop()
    }

    /// bluetoothd passes a write without response on and sends the read behind it at once; the
    /// read sees the write even when the write's handler takes a while (the old code answered
    /// the read first: miband2 read back the clock it had just set as it was before).
    @Test(.timeLimit(.minutes(1))) func aReadRightBehindAWriteWithoutResponseSeesTheWrite() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let value = Mutex<[UInt8]>([0])
        let application = GattApplication(path: "/org/tsgateway/test", services: [LocalGattService(uuid: Self.service, characteristics: [
            LocalGattCharacteristic(uuid: Self.readWrite, flags: ["read", "write-without-response"], read: { value.withLock { $0 } }, write: { bytes, _ in
                // What a simulator does before it takes the bytes: hops to its actors.
                try await Task.sleep(for: .milliseconds(50))
                value.withLock { $0 = bytes }
            }),
        ])])
        let advertisement = LEAdvertisement(path: "/org/tsgateway/test/advertisement0", serviceUUIDs: [Self.service], localName: "Test")
        let peripheral = BlueZPeripheral(bluez: bluez, adapter: try await bluez.adapter("hci1"), application: application, advertisement: advertisement)
        try await peripheral.start { _ in }
        let sender = try #require(fake.application?.sender)
        let path = "/org/tsgateway/test/service0/char0"
        for written in UInt8(1)...5 {
            let write = try DBusMessage.methodCall(destination: sender, path: path, interface: BlueZInterface.gattCharacteristic, member: "WriteValue")
            try write.append([.bytes([written]), .properties(["type": .string("command")])])
            fake.server.sendOneWay(write)
            let read = try await fake.server.call(destination: sender, path: path, interface: BlueZInterface.gattCharacteristic, member: "ReadValue", [.properties([:])])
            #expect(read.first?.byteArrayValue == [written], "the read after writing \(written) answered \(read.first?.byteArrayValue ?? [])")
        }
        await peripheral.stop()
    }

    @Test func aDevicePathNamesItsAddress() {
        #expect(DeviceHandle(path: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_09").address == "AA:BB:CC:DD:EE:09")
        #expect(DeviceHandle(path: "/org/bluez/hci0").address == "")
    }
}
