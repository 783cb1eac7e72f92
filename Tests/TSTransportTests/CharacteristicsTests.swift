import Testing
import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// A peripheral with characteristics addressed by service and UUID: `echo` notifies every write
/// reversed on `notify`, `value` reads as [7, 7].
private actor CharacteristicPeripheral: PeripheralEndpoint, CharacteristicsEndpoint {
    static let echo = GATTCharacteristicID(service: "0000FEE0-0000-1000-8000-00805F9B34FB", uuid: "00000004-0000-3512-2118-0009AF100700")
    static let notify = GATTCharacteristicID(service: "0000fee0-0000-1000-8000-00805f9b34fb", uuid: "00000005-0000-3512-2118-0009af100700")
    static let value = GATTCharacteristicID(service: "0000fee0-0000-1000-8000-00805f9b34fb", uuid: "00000006-0000-3512-2118-0009af100700")

    private var send: (@Sendable (GATTCharacteristicID, [UInt8]) async -> Void)?
    private(set) var writes: [GATTCharacteristicID: [[UInt8]]] = [:]
    private(set) var disconnects = 0

    nonisolated var characteristics: Set<GATTCharacteristicID> { [Self.echo, Self.notify, Self.value] }
    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) {}
    func centralWrote(_ chunk: [UInt8]) {}
    func centralConnected(notify: @escaping @Sendable (GATTCharacteristicID, [UInt8]) async -> Void) { send = notify }
    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] { [7, 7] }
    func centralWrote(_ value: [UInt8], to characteristic: GATTCharacteristicID) async throws {
        writes[characteristic, default: []].append(value)
        if characteristic == Self.echo { await send?(Self.notify, value.reversed()) }
    }

    func centralDisconnected() { disconnects += 1 }
}

@Suite("characteristics addressed by service and UUID on the loopback")
struct CharacteristicsTests {
    @Test("reads, writes and notifications reach the characteristic named, in any letter case; the streams end with the link")
    func addressed() async throws {
        let peripheral = CharacteristicPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default, characteristics: peripheral).open()
        #expect(connection.characteristics.count == 3)
        #expect(connection.characteristics.contains(GATTCharacteristicID(service: "0000FEE0-0000-1000-8000-00805F9B34FB", uuid: "00000005-0000-3512-2118-0009AF100700")))
        let notifications = try await connection.notifications(of: CharacteristicPeripheral.notify)
        try await connection.write([1, 2, 3], to: CharacteristicPeripheral.echo, withResponse: true)
        #expect(await peripheral.writes[CharacteristicPeripheral.echo] == [[1, 2, 3]])
        #expect(try await connection.read(CharacteristicPeripheral.value) == [7, 7])
        await connection.close()
        var received: [[UInt8]] = []
        for await value in notifications { received.append(value) }
        #expect(received == [[3, 2, 1]])
        #expect(await peripheral.disconnects >= 1, "the peripheral hears the link end")
        await #expect(throws: TransportError.self) { try await connection.read(CharacteristicPeripheral.value) }
    }

    @Test("a characteristic the peripheral lacks is not supported, and a link without any has none")
    func missing() async throws {
        let peripheral = CharacteristicPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default, characteristics: peripheral).open()
        let other = GATTCharacteristicID(service: "0000fee1-0000-1000-8000-00805f9b34fb", uuid: "00000009-0000-3512-2118-0009af100700")
        let error = await #expect(throws: TransportError.self) { try await connection.write([1], to: other, withResponse: true) }
        #expect(error == .noCharacteristic(other))
        #expect(error?.category == .notSupported)
        let plain = try await LoopbackTransport(peripheral: peripheral, mtu: .default).open()
        #expect(plain.characteristics.isEmpty)
        await #expect(throws: TransportError.self) { try await plain.read(CharacteristicPeripheral.value) }
    }

    @Test("the link's faults count these packets too: it drops after the number asked for")
    func faults() async throws {
        let peripheral = CharacteristicPeripheral()
        let transport = LoopbackTransport(peripheral: peripheral, mtu: .default, faults: FaultInjection(disconnectEvery: 2), characteristics: peripheral)
        let connection = try await transport.open()
        let notifications = try await connection.notifications(of: CharacteristicPeripheral.notify)
        // The echo and the write are the two packets the link carries before it drops.
        try await connection.write([1], to: CharacteristicPeripheral.echo, withResponse: true)
        await #expect(throws: TransportError.self) { try await connection.write([2], to: CharacteristicPeripheral.echo, withResponse: true) }
        var received: [[UInt8]] = []
        for await value in notifications { received.append(value) }
        #expect(received == [[1]])
        var events: [TransportEvent] = []
        for await event in connection.events { events.append(event) }
        #expect(events.contains { if case .disconnected = $0 { true } else { false } })
    }
}
