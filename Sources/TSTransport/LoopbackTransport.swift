import TSProtocol

/// An in-process link to a peripheral implementation (the watch simulator), with optional
/// fault injection. Each `open()` is a new connection, as a BLE reconnect would be.
public struct LoopbackTransport: WatchTransport {
    public let peripheral: any PeripheralEndpoint
    public let mtu: ATTMTU
    public let faults: FaultInjection

    public init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, faults: FaultInjection = .none) {
        self.peripheral = peripheral
        self.mtu = mtu
        self.faults = faults
    }

    public func open() async throws -> any TransportConnection {
        let connection = LoopbackConnection(peripheral: peripheral, mtu: mtu, faults: faults)
        await peripheral.centralConnected(mtu: mtu) { [weak connection] chunk in
            await connection?.deliverNotification(chunk)
        }
        return connection
    }
}

actor LoopbackConnection: TransportConnection {
    nonisolated let mtu: ATTMTU
    nonisolated let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let peripheral: any PeripheralEndpoint
    private let faults: FaultInjection
    private var dice: FaultDice
    private var heldBackWrite: [UInt8]?
    private var heldBackNotification: [UInt8]?
    private var packets = 0
    private var isOpen = true

    init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, faults: FaultInjection) {
        self.peripheral = peripheral
        self.mtu = mtu
        self.faults = faults
        self.dice = FaultDice(seed: faults.seed)
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
    }

    func write(_ chunk: [UInt8]) async throws {
        guard isOpen else { throw TransportError.notConnected }
        guard chunk.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: chunk.count, limit: mtu.chunkSize) }
        for packet in applyFaults(chunk, heldBack: &heldBackWrite) {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            guard isOpen else { return }
            await peripheral.centralWrote(packet)
            await countPacket()
        }
    }

    func deliverNotification(_ chunk: [UInt8]) async {
        guard isOpen else { return }
        for packet in applyFaults(chunk, heldBack: &heldBackNotification) {
            if faults.delay > .zero { try? await Task.sleep(for: faults.delay) }
            guard isOpen else { return }
            continuation.yield(.notification(packet))
            await countPacket()
        }
    }

    func close() async {
        await drop(reason: "closed by the central")
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
        continuation.yield(.disconnected(reason: reason))
        continuation.finish()
        await peripheral.centralDisconnected()
    }
}
