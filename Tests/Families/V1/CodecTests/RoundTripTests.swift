import Testing
import TSGATT
import TSModels
@testable import TSProtocol

@Suite struct RoundTripTests {
    /// encode → fragment at a random MTU 23…517 → reassemble from the chunks → decode == original.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomMessagesSurviveFragmentationAtRandomMTU(seed: UInt64) throws {
        var generator = MessageGenerator(seed: seed)
        var kindsSeen = Set<String>()
        for round in 0..<1500 {
            let message = generator.message()
            kindsSeen.insert(message.kind)
            let sequence = generator.u8()
            let frame = try message.frame(sequence: sequence)
            let mtu = try ATTMTU(generator.int(23...517))
            let chunks = Fragmenter.chunks(of: try frame.encoded(), mtu: mtu)
            #expect(chunks.allSatisfy { $0.count <= mtu.chunkSize && !$0.isEmpty })

            var reassembler = FrameReassembler()
            var frames: [Frame] = []
            for (index, chunk) in chunks.enumerated() {
                for event in reassembler.append(chunk, at: .milliseconds(index)) {
                    if case let .frame(frame) = event { frames.append(frame) } else { Issue.record("round \(round): unexpected \(event)") }
                }
            }
            #expect(frames.count == 1, "round \(round) \(message.kind) at \(mtu)")
            guard let received = frames.first else { continue }
            #expect(received.sequence == sequence)
            #expect(try Message(frame: received) == message, "round \(round) \(message.kind)")
        }
        #expect(kindsSeen.count == Message.allKinds.count, "every kind generated; missing \(Set(Message.allKinds).subtracting(kindsSeen))")
    }

    /// Many frames back to back, cut into chunks of random sizes (not aligned to frames).
    @Test func framesPackedIntoRandomChunksComeOutInOrder() throws {
        var generator = MessageGenerator(seed: 99)
        let messages = (0..<400).map { _ in generator.message() }
        var stream: [UInt8] = []
        for (index, message) in messages.enumerated() { stream += try message.frame(sequence: UInt8(index % 256)).encoded() }

        var reassembler = FrameReassembler()
        var decoded: [Message] = []
        var offset = 0
        while offset < stream.count {
            let size = min(generator.int(1...600), stream.count - offset)
            for event in reassembler.append(stream[offset..<offset + size], at: .zero) {
                if case let .frame(frame) = event { decoded.append(try Message(frame: frame)) }
            }
            offset += size
        }
        #expect(decoded == messages)
        #expect(reassembler.pendingByteCount == 0)
    }

    @Test func randomAlarmTablesRoundTripThroughJSONAndWire() throws {
        var generator = MessageGenerator(seed: 7)
        for _ in 0..<300 {
            let message = Message.alarmsSetRequest(AlarmTable(alarms: generator.alarms()))
            let json = try JSONEncoder().encode(message)
            let fromJSON = try JSONDecoder().decode(Message.self, from: json)
            #expect(fromJSON == message)
            #expect(try Message(frame: Frame.decode(message.frame(sequence: 1).encoded())) == message)
        }
    }
}

import Foundation
