import Testing
import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// A peripheral with two pairs: the first is silent, the second answers every write with its bytes reversed.
private actor TwoPairPeripheral: PeripheralEndpoint, SecondChannelEndpoint {
    private var sendSecond: (@Sendable ([UInt8]) async -> Void)?
    private(set) var firstWrites: [[UInt8]] = []
    private(set) var secondWrites: [[UInt8]] = []

    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) {}
    func centralWrote(_ chunk: [UInt8]) { firstWrites.append(chunk) }
    func centralDisconnected() {}
    func centralConnectedSecondChannel(send: @escaping @Sendable ([UInt8]) async -> Void) { sendSecond = send }
    func centralWroteSecondChannel(_ chunk: [UInt8]) async {
        secondWrites.append(chunk)
        await sendSecond?(chunk.reversed())
    }
}

private struct OnePairPeripheral: PeripheralEndpoint {
    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {}
    func centralWrote(_ chunk: [UInt8]) async {}
    func centralDisconnected() async {}
}

@Suite("a dialect's second write/notify pair on the loopback")
struct SecondChannelTests {
    @Test("writes and notifications of the second pair stay on it, and its stream ends with the link")
    func secondPairIsItsOwnChannel() async throws {
        let peripheral = TwoPairPeripheral()
        let connection = try await LoopbackTransport(peripheral: peripheral, mtu: .default, secondChannel: peripheral).open()
        let notifications = try #require(connection.secondChannelNotifications)
        try await connection.writeSecondChannel([1, 2, 3])
        #expect(await peripheral.secondWrites == [[1, 2, 3]])
        #expect(await peripheral.firstWrites.isEmpty)
        await #expect(throws: TransportError.self) { try await connection.writeSecondChannel([UInt8](repeating: 0, count: ATTMTU.default.chunkSize + 1)) }
        await connection.close()
        var received: [[UInt8]] = []
        for await chunk in notifications { received.append(chunk) }
        #expect(received == [[3, 2, 1]], "the stream holds the answer and ends when the link closes")
        await #expect(throws: TransportError.self) { try await connection.writeSecondChannel([4]) }
    }

    @Test("a link without a second pair says so: not supported")
    func noSecondPair() async throws {
        let connection = try await LoopbackTransport(peripheral: OnePairPeripheral(), mtu: .default).open()
        #expect(connection.secondChannelNotifications == nil)
        let error = await #expect(throws: TransportError.self) { try await connection.writeSecondChannel([1]) }
        #expect(error == .noSecondChannel)
        #expect(error?.category == .notSupported)
    }
}
