import Foundation
import TSBlueZ
import TSGATT
import TSModels
import TSTransport

/// The link to a real watch: BlueZ GATT on its dialect's service (`profile`). `open()` connects
/// (skipping Connect when BlueZ still holds the link), finds the two characteristics, takes
/// the MTU BlueZ negotiated, and subscribes to notifications before the first write. Without a
/// profile, or on a watch without its service, the link carries the standard services only.
public struct BlueZTransport: WatchTransport {
    public let bluez: BlueZ
    public let address: String
    public let adapterName: String?
    /// The dialect's service and characteristics; nil: standard services only.
    public let profile: GATTProfile?
    public let connectTimeout: Duration
    /// Called as `open()` passes each step, for timing a connect (`-v` logs them).
    public var onStep: (@Sendable (OpenStep) -> Void)?

    /// The steps of `open()`, in order.
    public enum OpenStep: String, Sendable, CaseIterable {
        case adapterFound = "adapter found"
        case deviceFound = "device found"
        case linkUp = "link up"
        case servicesResolved = "services resolved"
        case characteristicsListed = "characteristics listed"
        case notificationsAcquired = "notifications acquired"
        case writeAcquired = "write acquired"
    }

    public init(bluez: BlueZ, address: String, adapter: String? = nil, profile: GATTProfile? = .protocolV1, connectTimeout: Duration = .seconds(20)) {
        self.profile = profile
        self.bluez = bluez
        self.address = address
        self.adapterName = adapter
        self.connectTimeout = connectTimeout
    }

    public func open() async throws -> any TransportConnection {
        let adapter = try await bluez.adapter(adapterName)
        onStep?(.adapterFound)
        let device = try await bluez.discover(address: address, adapter: adapter)
        onStep?(.deviceFound)
        let onStep = self.onStep
        try await bluez.connect(device, timeout: connectTimeout, linkUp: { onStep?(.linkUp) })
        onStep?(.servicesResolved)
        let loss = try await bluez.linkLoss(of: device)
        // GATT discovery is done (ServicesResolved): what the watch offers is what BlueZ lists.
        let all = try await bluez.characteristics(of: device)
        onStep?(.characteristicsListed)
        let services = ServiceSet(all.compactMap { WatchService(uuid: $0.serviceUUID) })
        var standard: [StandardCharacteristic: GattCharacteristic] = [:]
        for wanted in StandardCharacteristic.allCases {
            standard[wanted] = all.first { $0.serviceUUID == wanted.service.uuid && $0.uuid == wanted.uuid }
        }
        let byID = Dictionary(all.map { (GATTCharacteristicID(service: $0.serviceUUID, uuid: $0.uuid), $0) }, uniquingKeysWith: { first, _ in first })
        let linkMTU = all.map(\.mtu).max() ?? ATTMTU.default.value
        guard let profile, all.contains(where: { $0.serviceUUID.lowercased() == profile.service.lowercased() }) else {
            return BlueZConnection(bluez: bluez, device: device, frames: nil, loss: loss, mtu: (try? ATTMTU(linkMTU)) ?? .default,
                                   services: services, standard: standard, byID: byID)
        }
        let write = try await bluez.characteristic(of: device, service: profile.service.lowercased(), uuid: profile.writeCharacteristic.lowercased())
        let notify = try await bluez.characteristic(of: device, service: profile.service.lowercased(), uuid: profile.notifyCharacteristic.lowercased())
        let values = try await bluez.acquiredOrSignalledNotifications(of: notify)
        onStep?(.notificationsAcquired)
        let allowsCommands = write.flags.contains("write-without-response")
        let withoutResponse = switch profile.writeMode {
        case .withoutResponseWhenAllowed: allowsCommands
        case .withoutResponse: true
        case .withResponse: false
        }
        let acquired = withoutResponse && allowsCommands ? try await bluez.acquireWrite(write) : nil
        if acquired != nil { onStep?(.writeAcquired) }
        let mtu = (try? ATTMTU(max(write.mtu, notify.mtu, acquired?.mtu ?? 0))) ?? .default
        var connection = BlueZConnection(bluez: bluez, device: device, frames: (write, values, acquired?.fd, withoutResponse), loss: loss, mtu: mtu,
                                         services: services, standard: standard, byID: byID)
        if let second = profile.secondChannel, all.contains(where: { $0.serviceUUID.lowercased() == second.service.lowercased() }) {
            connection.secondChannel = try await openSecondChannel(second, of: device, writeMode: profile.writeMode)
        }
        return connection
    }

    /// The second pair's notifications are subscribed before the first write, as the first pair's are.
    private func openSecondChannel(_ channel: GATTChannel, of device: DeviceHandle, writeMode: GATTProfile.WriteMode) async throws -> BlueZConnection.SecondChannel {
        let service = channel.service.lowercased()
        let write = try await bluez.characteristic(of: device, service: service, uuid: channel.writeCharacteristic.lowercased())
        let notify = try await bluez.characteristic(of: device, service: service, uuid: channel.notifyCharacteristic.lowercased())
        let values = try await bluez.acquiredOrSignalledNotifications(of: notify)
        let withoutResponse = switch writeMode {
        case .withoutResponseWhenAllowed: write.flags.contains("write-without-response")
        case .withoutResponse: true
        case .withResponse: false
        }
        return BlueZConnection.SecondChannel(write: write, withoutResponse: withoutResponse, notifications: values)
    }
}

struct BlueZConnection: TransportConnection {
    let bluez: BlueZ
    let device: DeviceHandle
    /// The dialect's write characteristic; nil on a watch without its service.
    let write: GattCharacteristic?
    let mtu: ATTMTU
    let events: AsyncStream<TransportEvent>
    let services: ServiceSet
    let standard: [StandardCharacteristic: GattCharacteristic]
    /// Every characteristic GATT discovery found, by service and UUID.
    let byID: [GATTCharacteristicID: GattCharacteristic]
    private let withoutResponse: Bool
    /// Write requests of this link one at a time (bluetoothd takes no second one in flight).
    private let writeRequests = WriteRequestTurns()
    /// From AcquireWrite: one datagram per ATT write command, no D-Bus call per packet.
    private let writeSocket: Int32?
    /// The profile's second write/notify pair, when the watch has its service.
    var secondChannel: SecondChannel?

    struct SecondChannel {
        var write: GattCharacteristic
        var withoutResponse: Bool
        var notifications: AsyncStream<[UInt8]>
    }

    var secondChannelNotifications: AsyncStream<[UInt8]>? { secondChannel?.notifications }

    func writeSecondChannel(_ chunk: [UInt8]) async throws {
        guard let secondChannel else { throw TransportError.noSecondChannel }
        guard chunk.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: chunk.count, limit: mtu.chunkSize) }
        try await writeValue(chunk, to: secondChannel.write, withResponse: !secondChannel.withoutResponse)
    }

    init(bluez: BlueZ, device: DeviceHandle,
         frames: (write: GattCharacteristic, values: AsyncStream<[UInt8]>, writeSocket: Int32?, withoutResponse: Bool)?,
         loss: AsyncStream<String>, mtu: ATTMTU, services: ServiceSet, standard: [StandardCharacteristic: GattCharacteristic],
         byID: [GATTCharacteristicID: GattCharacteristic]) {
        self.byID = byID
        self.writeSocket = frames?.writeSocket
        self.bluez = bluez
        self.device = device
        self.write = frames?.write
        self.mtu = mtu
        self.services = services
        self.standard = standard
        withoutResponse = frames?.withoutResponse ?? false
        let values = frames?.values
        events = AsyncStream { continuation in
            let task = Task {
                await withTaskGroup(of: Void.self) { group in
                    if let values {
                        group.addTask {
                            for await value in values { continuation.yield(.notification(value)) }
                            // The link-loss watcher usually knows why (link dropped, bluetoothd gone);
                            // give it the longest it takes to decide.
                            try? await Task.sleep(for: BlueZ.linkLossGrace + BlueZ.linkLossShutdownGrace + .seconds(1))
                            continuation.yield(.disconnected(reason: "the notification channel closed"))
                        }
                    }
                    group.addTask {
                        for await reason in loss { continuation.yield(.disconnected(reason: reason)) }
                    }
                    await group.next()
                    group.cancelAll()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    var standardCharacteristics: Set<StandardCharacteristic> { Set(standard.keys) }

    private func gatt(_ characteristic: StandardCharacteristic) throws -> GattCharacteristic {
        guard let found = standard[characteristic] else { throw TransportError.characteristicMissing(characteristic) }
        return found
    }

    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        try await bluez.read(try gatt(characteristic))
    }

    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        try await writeValue(value, to: try gatt(characteristic), withResponse: true)
    }

    func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]> {
        try await bluez.acquiredOrSignalledNotifications(of: try gatt(characteristic))
    }

    var characteristics: Set<GATTCharacteristicID> { Set(byID.keys) }

    private func gatt(_ characteristic: GATTCharacteristicID) throws -> GattCharacteristic {
        guard let found = byID[characteristic] else { throw TransportError.noCharacteristic(characteristic) }
        return found
    }

    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        try await bluez.read(try gatt(characteristic))
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        guard value.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: value.count, limit: mtu.chunkSize) }
        try await writeValue(value, to: try gatt(characteristic), withResponse: withResponse)
    }

    /// WriteValue: a write request waits for the link's last one to be answered; a command goes at once.
    private func writeValue(_ bytes: [UInt8], to characteristic: GattCharacteristic, withResponse: Bool) async throws {
        guard withResponse else { return try await bluez.write(bytes, to: characteristic, withResponse: false) }
        let bluez = self.bluez
        try await writeRequests.take { try await bluez.write(bytes, to: characteristic, withResponse: true) }
    }

    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        try await bluez.acquiredOrSignalledNotifications(of: try gatt(characteristic))
    }

    /// Device1.Name: what the peripheral advertised or its GAP Device Name. Not Alias, which
    /// falls back to the address when the peripheral gives no name.
    func peripheralName() async -> String? {
        guard let name = try? await bluez.deviceProperties(device)["Name"]?.stringValue, !name.isEmpty else { return nil }
        return name
    }

    func write(_ chunk: [UInt8]) async throws {
        guard chunk.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: chunk.count, limit: mtu.chunkSize) }
        if let writeSocket {
            // The socket is non-blocking (as bluetoothd hands it out): wait for room without
            // holding a thread of the concurrency pool, for up to 5 s.
            let deadline = ContinuousClock.now + .seconds(5)
            while true {
                let sent = chunk.withUnsafeBytes { send(writeSocket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent == chunk.count { return }
                let failure = errno
                guard sent < 0, failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR, ContinuousClock.now < deadline else {
                    throw TransportError.connectFailed("the write socket closed (\(String(cString: strerror(failure))))")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        guard let write else { throw TransportError.noProtocolV1 }
        try await writeValue(chunk, to: write, withResponse: !withoutResponse)
    }

    func close() async {
        if let writeSocket { Foundation.close(writeSocket) }
        try? await bluez.disconnect(device)
    }
}
