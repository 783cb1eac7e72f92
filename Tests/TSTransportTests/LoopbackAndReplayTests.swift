import Testing
import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// A peripheral that answers every chunk written to it with the same bytes as a notification.
private actor EchoPeripheral: PeripheralEndpoint {
    private var send: (@Sendable ([UInt8]) async -> Void)?
    private(set) var written: [[UInt8]] = []
    private(set) var disconnects = 0

    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) { self.send = send }
    func centralWrote(_ chunk: [UInt8]) async {
        written.append(chunk)
        await send?(chunk)
    }
    func centralDisconnected() { disconnects += 1 }
}

/// The first `count` events of `connection`, or fewer when it ends first.
private func events(of connection: any TransportConnection, count: Int) async -> [TransportEvent] {
    var seen: [TransportEvent] = []
    for await event in connection.events {
        seen.append(event)
        if seen.count == count { break }
    }
    return seen
}

@Suite("the transports without a watch: loopback, faults, capture and replay")
struct LoopbackAndReplayTests {
    static let chunks: [[UInt8]] = [[0x01, 0x02], [0x03], [0x04, 0x05, 0x06]]

    @Test("a loopback link delivers writes to the peripheral and its notifications back, in order")
    func loopbackInOrder() async throws {
        let peripheral = EchoPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default).open()
        #expect(connection.services == .protocolV1Only)
        for chunk in Self.chunks { try await connection.write(chunk) }
        #expect(await events(of: connection, count: 3) == Self.chunks.map(TransportEvent.notification))
        #expect(await peripheral.written == Self.chunks)
    }

    @Test("a chunk larger than the MTU allows is refused, and nothing is sent")
    func chunkTooLarge() async throws {
        let peripheral = EchoPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default).open()
        let limit = ATTMTU.default.chunkSize
        await #expect(throws: TransportError.chunkTooLarge(size: limit + 1, limit: limit)) {
            try await connection.write([UInt8](repeating: 0, count: limit + 1))
        }
        #expect(await peripheral.written.isEmpty)
    }

    @Test("disconnectEvery drops the link after that many packets; writes then fail as not connected")
    func disconnectEvery() async throws {
        let peripheral = EchoPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default, faults: FaultInjection(disconnectEvery: 2)).open()
        try await connection.write([0x01])
        let seen = await events(of: connection, count: 2)
        #expect(seen.first == .notification([0x01]))
        guard case .disconnected? = seen.last else {
            Issue.record("no disconnect after two packets: \(seen)")
            return
        }
        await #expect(throws: TransportError.notConnected) { try await connection.write([0x02]) }
    }

    @Test("a link that drops every packet delivers none of them")
    func dropEverything() async throws {
        let peripheral = EchoPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default, faults: FaultInjection(dropRate: 1)).open()
        for chunk in Self.chunks { try await connection.write(chunk) }
        #expect(await peripheral.written.isEmpty)
    }

    @Test("a recorded exchange replays: the same writes get the same notifications; another write is refused")
    func recordAndReplay() async throws {
        let recording = RecordingTransport(recording: LoopbackTransport(peripheral: EchoPeripheral(), mtu: .default))
        let live = try await recording.open()
        for chunk in Self.chunks { try await live.write(chunk) }
        #expect(await events(of: live, count: 3).count == 3)
        await live.close()
        let capture = await recording.entries()
        #expect(capture.first?.direction == .open)

        let replayed = try await ReplayTransport(capture: capture).open()
        for chunk in Self.chunks { try await replayed.write(chunk) }
        #expect(await events(of: replayed, count: 3) == Self.chunks.map(TransportEvent.notification))

        let again = try await ReplayTransport(capture: capture).open()
        await #expect(throws: TransportError.self) { try await again.write([0xFF]) }
        await #expect(throws: TransportError.captureExhausted("no recorded connection left to open")) {
            _ = try await ReplayTransport(capture: []).open()
        }
    }

    @Test("a close the watch made waits for the central to take the notifications before it: its next request meets it, or its grace ends")
    func aWatchsCloseComesAfterWhatCameBeforeIt() async throws {
        let watchClosed = [CaptureEntry(time: 0, direction: .open, bytes: [], mtu: 23),
                           CaptureEntry(time: 0.1, direction: .write, bytes: [0x01]), CaptureEntry(time: 0.1, direction: .notification, bytes: [0x01]),
                           CaptureEntry(time: 0.2, direction: .disconnected, bytes: [])]
        // The central's next request: the recorded one never reached the watch either.
        let asked = try await ReplayTransport(capture: watchClosed).open()
        try await asked.write([0x01])
        await #expect(throws: TransportError.notConnected) { try await asked.write([0x02]) }
        #expect(await events(of: asked, count: 2) == [.notification([0x01]), .disconnected(reason: "recorded disconnect")])

        // Waiting: the close comes by itself, after the notification.
        let waited = try await ReplayTransport(capture: watchClosed).open()
        try await waited.write([0x01])
        #expect(await events(of: waited, count: 2) == [.notification([0x01]), .disconnected(reason: "recorded disconnect")])

        // Not at once: a central that closes on the notification closes a link still up.
        let quick = try await ReplayTransport(capture: watchClosed).open()
        try await quick.write([0x01])
        await quick.close()
        #expect(await events(of: quick, count: 2) == [.notification([0x01]), .disconnected(reason: "closed by the central")])
    }

    @Test("a central that asks for a connection the capture lacks is told how the one before left the recording")
    func exhaustedNamesTheDeparture() async throws {
        let recording = RecordingTransport(recording: LoopbackTransport(peripheral: EchoPeripheral(), mtu: .default))
        let live = try await recording.open()
        for chunk in Self.chunks { try await live.write(chunk) }
        _ = await events(of: live, count: 3)
        await live.close()
        let capture = await recording.entries()

        let differing = ReplayTransport(capture: capture)
        let first = try await differing.open()
        await #expect(throws: TransportError.self) { try await first.write([0xFF]) }
        await #expect(throws: TransportError.captureExhausted("no recorded connection left to open (connection 1 of 1 ended before the recording did: "
            + "the central left the capture: the central wrote other bytes than recorded (recorded 0102))")) {
            _ = try await differing.open()
        }

        var closed = CaptureEntry(time: 0.3, direction: .disconnected, bytes: [])
        closed.byCentral = true
        let twoRequests = [CaptureEntry(time: 0, direction: .open, bytes: [], mtu: 23),
                           CaptureEntry(time: 0.1, direction: .write, bytes: [0x01]), CaptureEntry(time: 0.1, direction: .notification, bytes: [0x01]),
                           CaptureEntry(time: 0.2, direction: .write, bytes: [0x02]), CaptureEntry(time: 0.2, direction: .notification, bytes: [0x02]),
                           closed]
        let cut = ReplayTransport(capture: twoRequests)
        let early = try await cut.open()
        try await early.write([0x01])
        await early.close()
        do {
            _ = try await cut.open()
            Issue.record("a second connection opened from a capture of one")
        } catch let error as TransportError {
            #expect(error.description.contains("connection 1 of 1 ended before the recording did: the link ended with 2 recorded entries unplayed, the next a write"),
                    "\(error)")
        }
    }
}
