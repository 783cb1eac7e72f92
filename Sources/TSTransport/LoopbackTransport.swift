#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TSModels
import TSGATT

/// An in-process link to a peripheral implementation (the watch simulator), with optional
/// fault injection. Each `open()` is a new connection, as a BLE reconnect would be.
public struct LoopbackTransport: WatchTransport {
    public let peripheral: any PeripheralEndpoint
    public let mtu: ATTMTU
    public let faults: FaultInjection
    /// Standard services beside protocol v1; nil: none.
    public let standard: (any StandardServicesEndpoint)?
    /// False: a peripheral with standard services only (its protocol v1 endpoint is never used).
    public let hasProtocolV1: Bool
    /// The name the peripheral gives itself; nil: none.
    public let name: String?
    /// The peripheral's second write/notify pair; nil: none. The link's faults apply to it too.
    public let secondChannel: (any SecondChannelEndpoint)?
    /// The peripheral's characteristics addressed by service and UUID; nil: none. The link's faults apply to them too.
    public let characteristics: (any CharacteristicsEndpoint)?
    /// The notifications counted for `FaultInjection.pauseAfterNotifications`, over every link
    /// this transport opens: a link that drops while held does not start the count again.
    let notificationCount = NotificationCount()
    /// How the central writes to the profile's pair (`GATTProfile.writeMode`): write commands are
    /// what `FaultInjection.writeCommandsOvertake` reorders, write requests it leaves in order.
    public let writeMode: GATTProfile.WriteMode

    public init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, faults: FaultInjection = .none,
                standard: (any StandardServicesEndpoint)? = nil, hasProtocolV1: Bool = true, name: String? = nil,
                secondChannel: (any SecondChannelEndpoint)? = nil, characteristics: (any CharacteristicsEndpoint)? = nil,
                writeMode: GATTProfile.WriteMode = .withoutResponseWhenAllowed) {
        self.writeMode = writeMode
        self.characteristics = characteristics
        self.peripheral = peripheral
        self.mtu = mtu
        self.faults = faults
        self.standard = standard
        self.hasProtocolV1 = hasProtocolV1
        self.name = name
        self.secondChannel = secondChannel
    }

    public func open() async throws -> any TransportConnection {
        let standardCharacteristics = standard?.standardCharacteristics ?? []
        let services = ServiceSet(standardCharacteristics.services.union(hasProtocolV1 ? [.protocolV1] : []))
        let connection = LoopbackConnection(peripheral: peripheral, mtu: mtu, faults: faults, services: services, standard: standard, name: name,
                                            secondChannel: secondChannel, characteristics: self.characteristics, notificationCount: notificationCount,
                                            writesCommands: writeMode != .withResponse)
        if hasProtocolV1 {
            await peripheral.centralConnected(mtu: mtu) { [weak connection] chunk in
                await connection?.deliver { await $0.deliverNotification(chunk) }
            }
        }
        if let secondChannel {
            await secondChannel.centralConnectedSecondChannel { [weak connection] chunk in
                await connection?.deliver { await $0.deliverSecondChannelNotification(chunk) }
            }
        }
        if let characteristics = self.characteristics {
            await characteristics.centralConnected { [weak connection] characteristic, value in
                await connection?.deliver { await $0.deliverNotification(value, of: characteristic) }
            }
        }
        return connection
    }
}

actor LoopbackConnection: TransportConnection {
    nonisolated let mtu: ATTMTU
    nonisolated let services: ServiceSet
    private let standard: (any StandardServicesEndpoint)?
    private let name: String?
    nonisolated let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let peripheral: any PeripheralEndpoint
    private let faults: FaultInjection
    private let notificationCount: NotificationCount
    private var dice: FaultDice
    private var heldBackWrite: [UInt8]?
    private var heldBackNotification: [UInt8]?
    private var packets = 0
    private var isOpen = true
    private let secondChannel: (any SecondChannelEndpoint)?
    nonisolated let secondChannelNotifications: AsyncStream<[UInt8]>?
    private let secondChannelContinuation: AsyncStream<[UInt8]>.Continuation?
    private var heldBackSecondWrite: [UInt8]?
    private var heldBackSecondNotification: [UInt8]?
    private let characteristicsEndpoint: (any CharacteristicsEndpoint)?
    private var characteristicStreams: [GATTCharacteristicID: [AsyncStream<[UInt8]>.Continuation]] = [:]
    private var heldBackCharacteristicWrites: [GATTCharacteristicID: [UInt8]] = [:]
    private var heldBackCharacteristicNotifications: [GATTCharacteristicID: [UInt8]] = [:]
    /// The notifications held for `faults.answerLateness`, delivered one after another in the order sent.
    private var lateDeliveries: Task<Void, Never>?
    /// Whether the central's writes to the pair are write commands (`LoopbackTransport.writeMode`).
    private let writesCommands: Bool
    /// A write command the next write overtakes (`faults.writeCommandsOvertake`), and its turn:
    /// released after `commandOvertakingWindow` when no write follows it.
    private var overtakenCommand: (packet: [UInt8], turn: Int)?
    private var overtakingTurns = 0
    static let commandOvertakingWindow: Duration = .milliseconds(50)

    init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, faults: FaultInjection, services: ServiceSet, standard: (any StandardServicesEndpoint)?, name: String?,
         secondChannel: (any SecondChannelEndpoint)?, characteristics: (any CharacteristicsEndpoint)?, notificationCount: NotificationCount,
         writesCommands: Bool) {
        self.writesCommands = writesCommands
        self.secondChannel = secondChannel
        characteristicsEndpoint = characteristics
        if secondChannel != nil {
            let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
            (secondChannelNotifications, secondChannelContinuation) = (stream, continuation)
        } else {
            (secondChannelNotifications, secondChannelContinuation) = (nil, nil)
        }
        self.services = services
        self.standard = standard
        self.name = name
        self.peripheral = peripheral
        self.mtu = mtu
        self.faults = faults
        self.notificationCount = notificationCount
        self.dice = FaultDice(seed: faults.seed)
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
    }

    func peripheralName() async -> String? { name }

    nonisolated var standardCharacteristics: Set<StandardCharacteristic> { standard?.standardCharacteristics ?? [] }

    private func standardEndpoint(_ characteristic: StandardCharacteristic) throws -> any StandardServicesEndpoint {
        guard isOpen else { throw TransportError.notConnected }
        guard let standard, standard.standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        return standard
    }

    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        try await standardEndpoint(characteristic).read(characteristic)
    }

    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        try await standardEndpoint(characteristic).write(value, to: characteristic)
    }

    /// Ends when the link drops, as a BLE notification stream would.
    func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]> {
        let values = try await standardEndpoint(characteristic).notifications(of: characteristic)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        standardStreams.append(continuation)
        let forward = Task {
            for await value in values { continuation.yield(value) }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        return stream
    }

    private var standardStreams: [AsyncStream<[UInt8]>.Continuation] = []

    func write(_ chunk: [UInt8]) async throws {
        guard isOpen else { throw TransportError.notConnected }
        guard services.contains(.protocolV1) else { throw TransportError.noProtocolV1 }
        guard chunk.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: chunk.count, limit: mtu.chunkSize) }
        var packets = applyFaults(chunk, heldBack: &heldBackWrite)
        if faults.writeCommandsOvertake, writesCommands { packets = overtaking(packets) }
        for packet in packets {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            guard isOpen else { return }
            await peripheral.centralWrote(packet)
            await countPacket()
        }
    }

    /// The packets of one write command in the order the peripheral gets them: after the command
    /// held before it; its last packet held in turn, until the next write or the window's end.
    private func overtaking(_ packets: [[UInt8]]) -> [[UInt8]] {
        guard let last = packets.last else { return [] }
        if let held = overtakenCommand {
            overtakenCommand = nil
            return packets + [held.packet]
        }
        overtakingTurns += 1
        let turn = overtakingTurns
        overtakenCommand = (last, turn)
        Task { [weak self] in
            try? await Task.sleep(for: Self.commandOvertakingWindow)
            await self?.releaseOvertakenCommand(turn: turn)
        }
        return Array(packets.dropLast())
    }

    private func releaseOvertakenCommand(turn: Int) async {
        guard let held = overtakenCommand, held.turn == turn else { return }
        overtakenCommand = nil
        guard isOpen else { return }
        await peripheral.centralWrote(held.packet)
        await countPacket()
    }

    func deliverNotification(_ chunk: [UInt8]) async {
        guard isOpen else { return }
        for packet in applyFaults(chunk, heldBack: &heldBackNotification) {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            await pauseIfAsked()
            guard isOpen else { return }
            continuation.yield(.notification(packet))
            await countPacket()
        }
    }

    /// `FaultInjection.pauseAfterNotifications`: past that count, waits for its resume file (or the link's end).
    private func pauseIfAsked() async {
        guard let after = faults.pauseAfterNotifications, let file = faults.resumeFile else { return }
        guard notificationCount.next() > after else { return }
        while isOpen, access(file, F_OK) != 0 { try? await Task.sleep(for: .milliseconds(50)) }
    }

    func writeSecondChannel(_ chunk: [UInt8]) async throws {
        guard isOpen else { throw TransportError.notConnected }
        guard let secondChannel else { throw TransportError.noSecondChannel }
        guard chunk.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: chunk.count, limit: mtu.chunkSize) }
        for packet in applyFaults(chunk, heldBack: &heldBackSecondWrite) {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            guard isOpen else { return }
            await secondChannel.centralWroteSecondChannel(packet)
            await countPacket()
        }
    }

    func deliverSecondChannelNotification(_ chunk: [UInt8]) async {
        guard isOpen, let secondChannelContinuation else { return }
        for packet in applyFaults(chunk, heldBack: &heldBackSecondNotification) {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            await pauseIfAsked()
            guard isOpen else { return }
            secondChannelContinuation.yield(packet)
            await countPacket()
        }
    }

    nonisolated var characteristics: Set<GATTCharacteristicID> { characteristicsEndpoint?.characteristics ?? [] }

    private func endpoint(_ characteristic: GATTCharacteristicID) throws -> any CharacteristicsEndpoint {
        guard isOpen else { throw TransportError.notConnected }
        guard let characteristicsEndpoint, characteristicsEndpoint.characteristics.contains(characteristic) else {
            throw TransportError.noCharacteristic(characteristic)
        }
        return characteristicsEndpoint
    }

    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        try await endpoint(characteristic).read(characteristic)
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        let endpoint = try endpoint(characteristic)
        guard value.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: value.count, limit: mtu.chunkSize) }
        var held = heldBackCharacteristicWrites[characteristic]
        let packets = applyFaults(value, heldBack: &held)
        heldBackCharacteristicWrites[characteristic] = held
        for packet in packets {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            guard isOpen else { throw TransportError.notConnected }
            try await endpoint.centralWrote(packet, to: characteristic)
            await countPacket()
        }
    }

    /// Ends when the link drops, as a BLE notification stream would.
    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        _ = try endpoint(characteristic)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        characteristicStreams[characteristic, default: []].append(continuation)
        return stream
    }

    func deliverNotification(_ value: [UInt8], of characteristic: GATTCharacteristicID) async {
        guard isOpen else { return }
        var held = heldBackCharacteristicNotifications[characteristic]
        let packets = applyFaults(value, heldBack: &held)
        heldBackCharacteristicNotifications[characteristic] = held
        for packet in packets {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            await pauseIfAsked()
            guard isOpen else { return }
            // Nobody subscribed: the notification is lost, as on a real link.
            characteristicStreams[characteristic]?.forEach { $0.yield(packet) }
            await countPacket()
        }
    }

    func close() async {
        await drop(reason: "closed by the central")
    }

    /// Runs one delivery of a notification the peripheral sent: at once, or with
    /// `faults.answerLateness` after every notification sent before it, without waiting for it.
    func deliver(_ delivery: @escaping @Sendable (isolated LoopbackConnection) async -> Void) async {
        guard faults.answerLateness > .zero else {
            await delivery(self)
            return
        }
        let earlier = lateDeliveries, due = ContinuousClock.now + faults.answerLateness
        lateDeliveries = Task { [weak self] in
            await earlier?.value
            try? await Task.sleep(until: due)
            // A link dropped meanwhile delivers nothing (each delivery checks that it is open).
            guard let self else { return }
            await delivery(self)
        }
    }

    private func applyFaults(_ chunk: [UInt8], heldBack: inout [UInt8]?) -> [[UInt8]] {
        guard faults.isActive else { return [chunk] }
        var out: [[UInt8]] = []
        switch dice.fate(of: chunk, faults: faults) {
        case .drop: break
        case let .deliver(bytes): out = [bytes]
        case let .duplicate(bytes): out = [bytes, bytes]
        case let .holdBack(bytes):
            if heldBack == nil { heldBack = bytes; return [] }
            out = [bytes]
        }
        if let held = heldBack, !out.isEmpty {
            out.append(held)
            heldBack = nil
        }
        return out
    }

    private func countPacket() async {
        packets += 1
        if let every = faults.disconnectEvery, packets >= every {
            await drop(reason: "link lost after \(packets) packets (fault injection)")
        }
    }

    private func drop(reason: String) async {
        guard isOpen else { return }
        isOpen = false
        lateDeliveries?.cancel()
        continuation.yield(.disconnected(reason: reason))
        continuation.finish()
        secondChannelContinuation?.finish()
        standardStreams.forEach { $0.finish() }
        standardStreams = []
        characteristicStreams.values.forEach { $0.forEach { $0.finish() } }
        characteristicStreams = [:]
        if services.contains(.protocolV1) { await peripheral.centralDisconnected() }
        await characteristicsEndpoint?.centralDisconnected()
    }
}

/// A count shared by the links of one loopback transport.
final class NotificationCount: Sendable {
    private let count = Mutex(0)

    /// One more; the count with it.
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
}
