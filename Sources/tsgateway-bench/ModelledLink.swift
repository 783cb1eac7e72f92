import TSProtocol
import TSTransport

/// A BLE link modelled at the connection-event level: every `interval` the central may send up
/// to `packetsPerEvent` ATT packets and the watch up to `packetsPerEvent` notifications; the
/// rest wait for later events. Counts every ATT PDU for the wire-byte figures.
struct ModelledLinkTransport: WatchTransport {
    let peripheral: any PeripheralEndpoint
    let mtu: ATTMTU
    let interval: Duration
    let packetsPerEvent: Int
    let counter: LinkCounter

    func open() async throws -> any TransportConnection {
        let connection = ModelledConnection(peripheral: peripheral, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter)
        await peripheral.centralConnected(mtu: mtu) { [weak connection] chunk in await connection?.enqueueNotification(chunk) }
        await connection.start()
        return connection
    }
}

actor LinkCounter {
    /// ATT PDU bytes on the air, both directions, with the 3-byte ATT and 4-byte L2CAP headers.
    private(set) var wireBytes = 0
    private(set) var packets = 0
    private(set) var connectionEvents = 0
    /// Packets each connection event carried, central to watch and watch to central, in order.
    private(set) var eventLog: [(up: Int, down: Int)] = []

    func count(payload: Int) {
        packets += 1
        wireBytes += payload + 3 + 4
    }

    /// Notifications between the first event from `event` on that carried a write and the next
    /// that did: the answer to a first request and what followed it.
    func downBetweenFirstTwoWrites(from event: Int) -> Int {
        let log = eventLog.dropFirst(event)
        guard let first = log.firstIndex(where: { $0.up > 0 }) else { return 0 }
        let next = log[(first + 1)...].firstIndex { $0.up > 0 } ?? log.endIndex
        return log[(first + 1)..<next].reduce(0) { $0 + $1.down }
    }

    func event(up: Int, down: Int) {
        connectionEvents += 1
        eventLog.append((up, down))
    }
}

actor ModelledConnection: TransportConnection {
    nonisolated let mtu: ATTMTU
    nonisolated let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let peripheral: any PeripheralEndpoint
    private let interval: Duration
    private let packetsPerEvent: Int
    private let counter: LinkCounter
    private var upstream: [[UInt8]] = []
    private var downstream: [[UInt8]] = []
    private var ticker: Task<Void, Never>?

    init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter) {
        self.peripheral = peripheral
        self.mtu = mtu
        self.interval = interval
        self.packetsPerEvent = packetsPerEvent
        self.counter = counter
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
    }

    func start() {
        let interval = self.interval
        ticker = Task { [weak self] in
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                next = next.advanced(by: interval)
                try? await clock.sleep(until: next)
                await self?.connectionEvent()
            }
        }
    }

    func write(_ chunk: [UInt8]) async throws {
        upstream.append(chunk)
    }

    func enqueueNotification(_ chunk: [UInt8]) {
        downstream.append(chunk)
    }

    private func connectionEvent() async {
        let up = upstream.prefix(packetsPerEvent)
        upstream.removeFirst(up.count)
        let down = downstream.prefix(packetsPerEvent)
        downstream.removeFirst(down.count)
        await counter.event(up: up.count, down: down.count)
        for packet in up {
            await counter.count(payload: packet.count)
            await peripheral.centralWrote(packet)
        }
        for packet in down {
            await counter.count(payload: packet.count)
            continuation.yield(.notification(packet))
        }
    }

    func close() async {
        ticker?.cancel()
        continuation.yield(.disconnected(reason: "closed"))
        continuation.finish()
        await peripheral.centralDisconnected()
    }
}
