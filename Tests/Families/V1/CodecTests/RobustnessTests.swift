import Testing
import TSModels
@testable import TSProtocol

/// Random and mutated input through the reassembler and every payload decoder: each input must
/// end in frames, errors or discarded bytes — never a trap, never a hang (every call returns,
/// and a flush leaves nothing pending).
@Suite struct RobustnessTests {
    static let inputsPerShard = 25_000

    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func randomAndMutatedInputNeverTraps(seed: UInt64) throws {
        var generator = MessageGenerator(seed: seed)
        var outcomes = (frames: 0, decoded: 0, rejected: 0)
        for index in 0..<Self.inputsPerShard {
            let input = try mutatedInput(&generator, index: index)
            var reassembler = FrameReassembler()
            var events: [FrameReassembler.Event] = []
            var offset = 0
            while offset < input.count {
                let size = min(generator.int(1...300), input.count - offset)
                events += reassembler.append(input[offset..<offset + size], at: .milliseconds(offset))
                offset += size
            }
            events += reassembler.flush()
            #expect(reassembler.pendingByteCount == 0)
            for case let .frame(frame) in events {
                outcomes.frames += 1
                do {
                    _ = try Message(frame: frame)
                    outcomes.decoded += 1
                } catch {
                    outcomes.rejected += 1
                }
            }
            // The payload decoders behind a valid CRC: random command, flags and payload bytes.
            let payload = (0..<generator.int(0...64)).map { _ in generator.u8() }
            let command = CommandID.all[generator.int(0...CommandID.all.count - 1)]
            _ = try? Message(frame: Frame(flags: FrameFlags(rawValue: generator.u8()), sequence: 0, command: command, payload: payload))
        }
        // The mix exercised both paths: some inputs decoded, some were rejected after reassembly.
        #expect(outcomes.decoded > 0)
        #expect(outcomes.rejected > 0)
    }

    /// One fuzz input: pure noise, or valid frames with bit flips, insertions, deletions,
    /// truncation, duplicated ranges, or payload mutations re-sealed with a correct CRC.
    private func mutatedInput(_ generator: inout MessageGenerator, index: Int) throws -> [UInt8] {
        if index % 10 == 0 {
            return (0..<generator.int(0...400)).map { _ in generator.u8() }
        }
        var frame = try generator.message().frame(sequence: generator.u8())
        if index % 3 == 0, !frame.payload.isEmpty {
            // Valid CRC around a mutated payload: reaches the payload decoders.
            for _ in 0..<generator.int(1...4) {
                frame.payload[generator.int(0...frame.payload.count - 1)] = generator.u8()
            }
            if generator.bool() { frame.payload.removeLast(generator.int(0...frame.payload.count - 1)) }
            return try frame.encoded()
        }
        var bytes = try frame.encoded()
        for _ in 0..<generator.int(1...3) where !bytes.isEmpty {
            let at = generator.int(0...bytes.count - 1)
            switch generator.int(0...4) {
            case 0: bytes[at] ^= UInt8(1) << UInt8(generator.int(0...7))
            case 1: bytes.insert(generator.u8(), at: at)
            case 2: bytes.remove(at: at)
            case 3: bytes.removeLast(generator.int(0...bytes.count - at - 1))
            default: bytes.insert(contentsOf: bytes[at..<min(at + generator.int(1...20), bytes.count)], at: at)
            }
        }
        return bytes
    }
}
