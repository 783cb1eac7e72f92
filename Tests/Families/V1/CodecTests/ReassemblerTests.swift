import Testing
import TSModels
@testable import TSProtocol

private func frames(_ events: [FrameReassembler.Event]) -> [Frame] {
    events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
}

private func corruptCount(_ events: [FrameReassembler.Event]) -> Int {
    events.filter { if case .corrupt = $0 { true } else { false } }.count
}

private func garbageCount(_ events: [FrameReassembler.Event]) -> Int {
    events.reduce(0) { if case let .garbage(count) = $1 { $0 + count } else { $0 } }
}

@Suite struct ReassemblerTests {
    let first = try! Message.batteryResponse(BatteryStatus(level: 80, state: .charging)).frame(sequence: 1)
    let second = try! Message.alarmsGetResponse(AlarmTable(alarms: [Alarm(slot: 3, label: "Work", hour: 7, minute: 0)])).frame(sequence: 2)
    let third = try! Message.liveStage(LiveStageEvent(kind: .fellAsleep, stage: .light, time: 1_763_590_000)).frame(sequence: 3)

    @Test func garbageBeforeAFrameIsCountedAndSkipped() throws {
        var reassembler = FrameReassembler()
        let events = reassembler.append([0x00, 0xA5, 0x07, 0xFF] + (try first.encoded()), at: .zero)
        #expect(frames(events) == [first])
        #expect(garbageCount(events) == 4)
    }

    @Test func oneBytePerChunkStillYieldsTheFrame() throws {
        var reassembler = FrameReassembler()
        var out: [Frame] = []
        for byte in try second.encoded() { out += frames(reassembler.append([byte], at: .zero)) }
        #expect(out == [second])
    }

    @Test func aLostChunkCostsOnlyItsOwnFrame() throws {
        // The second frame loses 5 bytes from its middle; the frames after it survive.
        var damaged = try second.encoded()
        damaged.removeSubrange(10..<15)
        var reassembler = FrameReassembler()
        var events = reassembler.append(try first.encoded() + damaged + (try third.encoded()) + (try first.encoded()), at: .zero)
        events += reassembler.flush()
        #expect(frames(events) == [first, third, first])
        #expect(corruptCount(events) == 1)
        #expect(reassembler.pendingByteCount == 0)
    }

    @Test func aFlippedBitIsReportedWithTheHeaderForANack() throws {
        var damaged = try second.encoded()
        damaged[12] ^= 0x10
        var reassembler = FrameReassembler()
        let events = reassembler.append(damaged + (try third.encoded()), at: .zero)
        #expect(frames(events) == [third])
        let corrupt = events.compactMap { if case let .corrupt(info) = $0 { info } else { nil } }
        #expect(corrupt.map(\.header.sequence) == [2])
        #expect(corrupt.map(\.error.code) == [.crcMismatch])
    }

    @Test func aPartialFrameIsAbandonedAfterTheQuietPeriod() throws {
        var reassembler = FrameReassembler(partialFrameTimeout: .milliseconds(1000))
        let bytes = try second.encoded()
        #expect(frames(reassembler.append(bytes.prefix(10), at: .milliseconds(0))).isEmpty)
        #expect(reassembler.partialFrameDeadline == .milliseconds(1000))
        #expect(reassembler.expire(at: .milliseconds(999)).isEmpty)
        #expect(reassembler.pendingByteCount == 10)
        let events = reassembler.expire(at: .milliseconds(1000))
        #expect(garbageCount(events) == 10)
        #expect(reassembler.pendingByteCount == 0)
        #expect(reassembler.partialFrameDeadline == nil)
    }

    @Test func aChunkAfterTheQuietPeriodDoesNotJoinTheStalePartialFrame() throws {
        var reassembler = FrameReassembler()
        let stale = try second.encoded()
        _ = reassembler.append(stale.prefix(12), at: .milliseconds(0))
        let events = reassembler.append(try third.encoded(), at: .milliseconds(5000))
        #expect(frames(events) == [third])
    }

    @Test func aCompleteFrameInsideAnAbandonedOneIsDelivered() throws {
        // A header claiming 100 payload bytes, followed by a whole frame, then silence.
        let fakeHeader: [UInt8] = [0xA5, 0x01, 0x00, 0x07, 0x10, 0x00, 100, 0x00]
        var reassembler = FrameReassembler()
        let during = reassembler.append(fakeHeader + (try third.encoded()), at: .zero)
        #expect(frames(during).isEmpty)
        let after = reassembler.expire(at: .seconds(2))
        #expect(frames(after) == [third])
    }

    @Test func payloadBytesThatLookLikeAHeaderDoNotConfuseTheScanner() throws {
        let tricky = try Message.alarmsSetRequest(AlarmTable(alarms: [
            Alarm(slot: 0xA5, label: "\u{A5}\u{01}", hour: 1, minute: 0, remark: String(decoding: [0xA5, 0x01] as [UInt8], as: UTF8.self)),
        ])).frame(sequence: 0xA5)
        var reassembler = FrameReassembler()
        let events = reassembler.append(try tricky.encoded() + (try first.encoded()), at: .zero)
        #expect(frames(events) == [tricky, first])
        #expect(corruptCount(events) == 0)
    }

    @Test func oversizedLengthsAreNotWaitedFor() throws {
        // 0xA5 0x01 with length 0xFFFF cannot be a frame: the scanner moves on at once.
        var reassembler = FrameReassembler()
        let events = reassembler.append([0xA5, 0x01, 0, 0, 0, 0, 0xFF, 0xFF] + (try first.encoded()), at: .zero)
        #expect(frames(events) == [first])
    }

    @Test func aSmallerAnnouncedMaximumIsEnforced() throws {
        let big = try Message.sleepPage(SleepPage(transferId: 1, page: 0, last: true,
            records: (0..<100).map { SleepItem(stage: .light, start: Int64(1_763_000_000 + $0 * 60), duration: 60) })).frame(sequence: 0)
        var reassembler = FrameReassembler(maxPayload: 256)
        let events = reassembler.append(try big.encoded(), at: .zero) + reassembler.flush()
        #expect(frames(events).isEmpty)
    }
}
