import Foundation
import Testing
import TSGATT
import TSModels
import TSTransport

/// A peripheral with two characteristics addressed by service and UUID: a command one that
/// answers each write with the bytes reversed, and a value one that can be read.
private actor CommandPeripheral: PeripheralEndpoint, CharacteristicsEndpoint {
    static let command = GATTCharacteristicID(service: "0000aaa0-0000-1000-8000-00805f9b34fb", uuid: "0000aaa1-0000-1000-8000-00805f9b34fb")
    static let value = GATTCharacteristicID(service: "0000aaa0-0000-1000-8000-00805f9b34fb", uuid: "0000aaa2-0000-1000-8000-00805f9b34fb")
    private var notify: (@Sendable (GATTCharacteristicID, [UInt8]) async -> Void)?

    nonisolated var characteristics: Set<GATTCharacteristicID> { [Self.command, Self.value] }
    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) {}
    func centralWrote(_ chunk: [UInt8]) {}
    func centralConnected(notify: @escaping @Sendable (GATTCharacteristicID, [UInt8]) async -> Void) { self.notify = notify }
    func read(_ characteristic: GATTCharacteristicID) throws -> [UInt8] { [0x2A] }
    func centralWrote(_ value: [UInt8], to characteristic: GATTCharacteristicID) async { await notify?(characteristic, value.reversed()) }
    func centralDisconnected() {}
}

/// The capture model beyond one write/notify pair, without any dialect: a channel is a pair or
/// a characteristic by service and UUID; the recording transport records writes, reads and
/// notifications of such characteristics, and the replay transport plays them back on the
/// characteristic they went over.
@Suite struct CharacteristicCaptureTests {
    @Test func aChannelIsAPairOrACharacteristicAndReadsBackFromItsText() throws {
        #expect(CaptureChannel(rawValue: "main") == .main && CaptureChannel(rawValue: "second") == .second)
        let channel = CaptureChannel(CommandPeripheral.command)
        #expect(channel.rawValue == "0000aaa0-0000-1000-8000-00805f9b34fb/0000aaa1-0000-1000-8000-00805f9b34fb")
        #expect(CaptureChannel(rawValue: channel.rawValue.uppercased())?.characteristic == CommandPeripheral.command)
        #expect(CaptureChannel.main.characteristic == nil)
        for wrong in ["", "third", "0000aaa0/0000aaa1", "0000aaa0-0000-1000-8000-00805f9b34fb/", "x/y/z"] { #expect(CaptureChannel(rawValue: wrong) == nil) }
        // A first-pair entry keeps the shape it always had; a characteristic's names it.
        let lines = String(decoding: try CaptureFile.lines([CaptureEntry(time: 0, direction: .write, bytes: [1], channel: .main),
                                                            CaptureEntry(time: 0, direction: .read, bytes: [2], channel: channel)]), as: UTF8.self)
        let split = lines.split(separator: "\n")
        #expect(split.count == 2 && !split[0].contains("channel"))
        #expect(try JSONDecoder().decode(CaptureEntry.self, from: Data(split[1].utf8)).channel == channel)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(CaptureEntry.self, from: Data("{\"channel\":\"third\",\"direction\":\"write\",\"hex\":\"01\",\"time\":0}".utf8)) }
    }

    @Test func aRecordingOfCharacteristicsReplaysOnThem() async throws {
        let peripheral = CommandPeripheral()
        let recording = RecordingTransport(recording: LoopbackTransport(peripheral: peripheral, mtu: .default, hasProtocolV1: false, characteristics: peripheral))
        let live = try await recording.open()
        let answers = try await live.notifications(of: CommandPeripheral.command)
        try await live.write([1, 2, 3], to: CommandPeripheral.command, withResponse: true)
        var iterator = answers.makeAsyncIterator()
        #expect(await iterator.next() == [3, 2, 1])
        #expect(try await live.read(CommandPeripheral.value) == [0x2A])
        await live.close()
        // The disconnect reaches the recorder through the link's events, after the close returns.
        var entries = await recording.entries()
        for _ in 0..<200 where entries.last?.direction != .disconnected {
            try await Task.sleep(for: .milliseconds(10))
            entries = await recording.entries()
        }
        #expect(entries.first?.characteristics == [CommandPeripheral.command, CommandPeripheral.value].map { CaptureChannel($0).rawValue })
        #expect(entries.filter { $0.direction != .open && $0.direction != .disconnected }.map(\.direction) == [.write, .notification, .read])
        #expect(entries.last?.direction == .disconnected && entries.last?.byCentral == true)

        let replayed = try await ReplayTransport(capture: entries).open()
        #expect(replayed.characteristics == [CommandPeripheral.command, CommandPeripheral.value])
        let replayedAnswers = try await replayed.notifications(of: CommandPeripheral.command)
        await #expect(throws: TransportError.self) { try await replayed.write([1, 2, 3], to: CommandPeripheral.value, withResponse: true) }
        try await replayed.write([1, 2, 3], to: CommandPeripheral.command, withResponse: true)
        var replayedIterator = replayedAnswers.makeAsyncIterator()
        #expect(await replayedIterator.next() == [3, 2, 1])
        #expect(try await replayed.read(CommandPeripheral.value) == [0x2A])
        // The central's own close was recorded: the link stays up until the central closes it.
        await #expect(throws: TransportError.self) { try await replayed.read(CommandPeripheral.value) }
        await replayed.close()
        #expect(await replayedIterator.next() == nil)
    }
}
