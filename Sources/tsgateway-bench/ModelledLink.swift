import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// A BLE link modelled at the connection-event level: every `interval` the central may send up
/// to `packetsPerEvent` ATT packets and the watch up to `packetsPerEvent` notifications; the
/// rest wait for later events. Counts every ATT PDU for the wire-byte figures.
///
/// Besides the profile's write/notify pair (write commands and notifications), a watch that
/// speaks over characteristics addressed by service and UUID (a Huami band's) is modelled with
/// ATT's requests: a Write Request or Read Request goes up in one event, its response comes down
/// in a later one (the watch answers what it received at the next event at the earliest), and the
/// central's call returns when the response has arrived, as BlueZ's does.
struct ModelledLinkTransport: WatchTransport {
    let peripheral: any PeripheralEndpoint
    let mtu: ATTMTU
    let interval: Duration
    let packetsPerEvent: Int
    let counter: LinkCounter
    /// The peripheral's characteristics addressed by service and UUID; nil: none.
    var characteristics: (any CharacteristicsEndpoint)? = nil
    /// The peripheral's standard services (Device Information, Heart Rate); nil: none.
    var standard: (any StandardServicesEndpoint)? = nil
    /// The name the peripheral gives itself; nil: none.
    var name: String? = nil

    func open() async throws -> any TransportConnection {
        let connection = ModelledConnection(peripheral: peripheral, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter,
                                            characteristics: characteristics, standard: standard, name: name)
        await peripheral.centralConnected(mtu: mtu) { [weak connection] chunk in await connection?.enqueueNotification(chunk) }
        await characteristics?.centralConnected { [weak connection] characteristic, value in
            await connection?.enqueueNotification(value, of: characteristic)
        }
        await connection.start()
        return connection
    }
}

actor LinkCounter {
    /// ATT PDU bytes on the air, both directions, with the 4-byte L2CAP header.
    private(set) var wireBytes = 0
    private(set) var packets = 0
    private(set) var connectionEvents = 0
    /// Packets each connection event carried, central to watch and watch to central, in order.
    private(set) var eventLog: [(up: Int, down: Int)] = []

    /// A write command, write request or notification: `payload` value bytes after the 3-byte ATT header.
    func count(payload: Int) {
        count(pdu: payload + 3)
    }

    /// An ATT PDU of `pdu` bytes (opcode included; a write response is 1, a read request 3).
    func count(pdu: Int) {
        packets += 1
        wireBytes += pdu + 4
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
    /// What the central sends: a write command on the profile's pair, or a request whose response it waits for.
    enum Up {
        case command([UInt8])
        case write(GATTCharacteristicID, [UInt8], CheckedContinuation<Void, any Error>)
        case read(GATTCharacteristicID, CheckedContinuation<[UInt8], any Error>)
        case readStandard(StandardCharacteristic, CheckedContinuation<[UInt8], any Error>)
    }

    /// What the watch sends: a notification of the pair or of a characteristic, or a response.
    enum Down {
        case notification([UInt8])
        case characteristicNotification(GATTCharacteristicID, [UInt8])
        case writeResponse(CheckedContinuation<Void, any Error>, (any Error)?)
        case readResponse(CheckedContinuation<[UInt8], any Error>, Result<[UInt8], any Error>)
    }

    nonisolated let mtu: ATTMTU
    nonisolated let events: AsyncStream<TransportEvent>
    nonisolated let services: ServiceSet
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let peripheral: any PeripheralEndpoint
    private let characteristicsEndpoint: (any CharacteristicsEndpoint)?
    private let standard: (any StandardServicesEndpoint)?
    private let name: String?
    private let interval: Duration
    private let packetsPerEvent: Int
    private let counter: LinkCounter
    private var upstream: [Up] = []
    private var downstream: [Down] = []
    private var characteristicStreams: [GATTCharacteristicID: [AsyncStream<[UInt8]>.Continuation]] = [:]
    private var ticker: Task<Void, Never>?
    private var isOpen = true

    init(peripheral: any PeripheralEndpoint, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter,
         characteristics: (any CharacteristicsEndpoint)? = nil, standard: (any StandardServicesEndpoint)? = nil, name: String? = nil) {
        self.peripheral = peripheral
        self.mtu = mtu
        self.interval = interval
        self.packetsPerEvent = packetsPerEvent
        self.counter = counter
        characteristicsEndpoint = characteristics
        self.standard = standard
        self.name = name
        services = ServiceSet((standard?.standardCharacteristics.services ?? []).union([.protocolV1]))
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

    func peripheralName() async -> String? { name }

    func write(_ chunk: [UInt8]) async throws {
        upstream.append(.command(chunk))
    }

    func enqueueNotification(_ chunk: [UInt8]) {
        downstream.append(.notification(chunk))
    }

    func enqueueNotification(_ value: [UInt8], of characteristic: GATTCharacteristicID) {
        downstream.append(.characteristicNotification(characteristic, value))
    }

    // MARK: Characteristics addressed by service and UUID

    nonisolated var characteristics: Set<GATTCharacteristicID> { characteristicsEndpoint?.characteristics ?? [] }

    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        guard isOpen else { throw TransportError.notConnected }
        guard characteristics.contains(characteristic) else { throw TransportError.noCharacteristic(characteristic) }
        return try await withCheckedThrowingContinuation { upstream.append(.read(characteristic, $0)) }
    }

    /// A Write Command goes out like the pair's writes; a Write Request waits for its response.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        guard characteristics.contains(characteristic) else { throw TransportError.noCharacteristic(characteristic) }
        guard value.count <= mtu.chunkSize else { throw TransportError.chunkTooLarge(size: value.count, limit: mtu.chunkSize) }
        guard isOpen else { throw TransportError.notConnected }
        try await withCheckedThrowingContinuation { upstream.append(.write(characteristic, value, $0)) }
    }

    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        guard characteristics.contains(characteristic) else { throw TransportError.noCharacteristic(characteristic) }
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        characteristicStreams[characteristic, default: []].append(continuation)
        return stream
    }

    // MARK: Standard services (read over the link; writes and notifications pass straight through: no sync uses them)

    nonisolated var standardCharacteristics: Set<StandardCharacteristic> { standard?.standardCharacteristics ?? [] }

    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        guard isOpen else { throw TransportError.notConnected }
        guard standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        return try await withCheckedThrowingContinuation { upstream.append(.readStandard(characteristic, $0)) }
    }

    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        guard let standard, standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        try await standard.write(value, to: characteristic)
    }

    func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]> {
        guard let standard, standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        return await standard.notifications(of: characteristic)
    }

    // MARK: The connection event

    private func connectionEvent() async {
        let up = upstream.prefix(packetsPerEvent)
        upstream.removeFirst(up.count)
        let down = downstream.prefix(packetsPerEvent)
        downstream.removeFirst(down.count)
        await counter.event(up: up.count, down: down.count)
        for packet in up {
            switch packet {
            case let .command(chunk):
                await counter.count(payload: chunk.count)
                await peripheral.centralWrote(chunk)
            case let .write(characteristic, value, waiting):
                await counter.count(payload: value.count)
                // The response goes out before what the watch notifies in answer: its ATT layer answers at once.
                let index = downstream.count
                let failure: (any Error)?
                do {
                    try await characteristicsEndpoint?.centralWrote(value, to: characteristic)
                    failure = nil
                } catch {
                    failure = error
                }
                guard isOpen else {
                    waiting.resume(throwing: TransportError.notConnected)
                    continue
                }
                downstream.insert(.writeResponse(waiting, failure), at: min(index, downstream.count))
            case let .read(characteristic, waiting):
                await counter.count(pdu: 3)
                let endpoint = characteristicsEndpoint
                let result = await outcome {
                    guard let endpoint else { throw TransportError.noCharacteristic(characteristic) }
                    return try await endpoint.read(characteristic)
                }
                guard isOpen else {
                    waiting.resume(throwing: TransportError.notConnected)
                    continue
                }
                downstream.append(.readResponse(waiting, result))
            case let .readStandard(characteristic, waiting):
                await counter.count(pdu: 3)
                let standard = self.standard
                let result = await outcome {
                    guard let standard else { throw TransportError.characteristicMissing(characteristic) }
                    return try await standard.read(characteristic)
                }
                guard isOpen else {
                    waiting.resume(throwing: TransportError.notConnected)
                    continue
                }
                downstream.append(.readResponse(waiting, result))
            }
        }
        for packet in down {
            switch packet {
            case let .notification(chunk):
                await counter.count(payload: chunk.count)
                continuation.yield(.notification(chunk))
            case let .characteristicNotification(characteristic, value):
                await counter.count(payload: value.count)
                characteristicStreams[characteristic]?.forEach { $0.yield(value) }
            case let .writeResponse(waiting, error):
                await counter.count(pdu: error == nil ? 1 : 5)
                if let error { waiting.resume(throwing: error) } else { waiting.resume() }
            case let .readResponse(waiting, result):
                await counter.count(pdu: 1 + ((try? result.get())?.count ?? 4))
                waiting.resume(with: result)
            }
        }
    }

    func close() async {
        guard isOpen else { return }
        isOpen = false
        ticker?.cancel()
        for packet in upstream {
            switch packet {
            case .command: break
            case let .write(_, _, waiting): waiting.resume(throwing: TransportError.notConnected)
            case let .read(_, waiting), let .readStandard(_, waiting): waiting.resume(throwing: TransportError.notConnected)
            }
        }
        for packet in downstream {
            switch packet {
            case .notification, .characteristicNotification: break
            case let .writeResponse(waiting, _): waiting.resume(throwing: TransportError.notConnected)
            case let .readResponse(waiting, _): waiting.resume(throwing: TransportError.notConnected)
            }
        }
        upstream = []
        downstream = []
        continuation.yield(.disconnected(reason: "closed"))
        continuation.finish()
        characteristicStreams.values.forEach { $0.forEach { $0.finish() } }
        characteristicStreams = [:]
        await peripheral.centralDisconnected()
        await characteristicsEndpoint?.centralDisconnected()
    }
}

private func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
