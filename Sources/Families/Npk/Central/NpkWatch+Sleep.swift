import Foundation
import SwiftProtobuf
import TSDevice
import TSModels
import TSNpk

/// One sleep sync in progress: the list frames of its days, collected in order.
struct SleepSink {
    var id: Int
    /// The sync start's sequence, once its answer came.
    var sequence: UInt16?
    var range: Range<Int64>
    var assembler = NpkListAssembler()
    var continuation: AsyncThrowingStream<[SleepItem], any Error>.Continuation
    var lastFrame: ContinuousClock.Instant = .now
    /// Days that came ahead of their turn, by index: bluetoothd spreads notifications over its
    /// EATT bearers and they can overtake one another (protocol-spec/npk/topstep-npk.md section 4).
    var early: [UInt32: NpkFrame] = [:]
    /// 05/22 came while days were still missing; they may yet arrive.
    var endSeen = false

    /// More days ahead of their turn than this and the list is taken as broken.
    static let maxEarlyDays = 64
    /// How long after 05/22 the missing days of a reordered list may still come.
    static let endGrace: Duration = .seconds(1)

    var isIncomplete: Bool { !early.isEmpty || (assembler.total != nil && !assembler.isComplete) }

    /// The index of a list frame of this sync that is ahead of the next one the list needs.
    func earlyIndex(of frame: NpkFrame) -> UInt32? {
        guard frame.flags.contains(.list), early.count < Self.maxEarlyDays, sequence == nil || frame.sequence == sequence,
              let position = try? NpkListPosition.split(frame.payload).0, position.index > UInt32(assembler.elements.count) else { return nil }
        return position.index
    }
}

/// Sleep sync by range: 05/21 type 5, list frames 05/05 (one day each), 05/22. NPK takes no
/// acknowledgement and deletes nothing; the gateway's cursor alone says what is stored.
extension NpkWatch {
    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        guard connection != nil else { throw WatchError.notConnected }
        let until = end ?? Int64(configuration.now().timeIntervalSince1970) + 1
        guard start < until else { return SleepRecordTransfer(total: 0, parts: AsyncThrowingStream { $0.finish() }) }
        let startRequest = try NpkSyncType.sleep.startRequest(fromUnix: start, toUnix: until)
        let (parts, continuation) = AsyncThrowingStream.makeStream(of: [SleepItem].self)
        // The sink is in place before the request goes out: the days may follow the answer at
        // once, before this function resumes.
        failSleepTransfer(WatchError.transferAbandoned("a new sleep transfer started"))
        let id = Int.random(in: 0...Int.max)
        sleepSink = SleepSink(id: id, range: start..<until, continuation: continuation)
        let answer: NpkFrame
        let result: NpkSyncStartResult
        do {
            answer = try await request(.syncStart, message: startRequest)
            result = NpkSyncStartResult(try answer.payload(as: TSMetaSyncStartResponse.self))
        } catch {
            endSleepSink(id)
            throw error
        }
        switch result {
        case .nothingNew:
            endSleepSink(id)
            continuation.finish()
            return SleepRecordTransfer(total: 0, parts: parts)
        case let .failed(code):
            endSleepSink(id)
            throw NpkRefusal(command: .syncStart, result: code)
        case .started:
            if sleepSink?.id == id { sleepSink?.sequence = answer.sequence }
            watchSleepTransfer(id)
            return SleepRecordTransfer(total: nil, parts: parts)
        }
    }

    private func endSleepSink(_ id: Int) {
        if sleepSink?.id == id { sleepSink = nil }
    }

    /// A day of the list: taken when it is the next one (with the early ones it lets through),
    /// kept aside when it overtook days before it.
    func sleepFrame(_ frame: NpkFrame) {
        guard var sink = sleepSink, !retiredSyncSequences.contains(frame.sequence) else {
            staleSyncFramesSeen()
            return
        }
        sink.lastFrame = .now
        if let index = sink.earlyIndex(of: frame) {
            sink.early[index] = frame
            sleepSink = sink
            return
        }
        do {
            try takeSleepDay(frame, into: &sink)
            while let next = sink.early.removeValue(forKey: UInt32(sink.assembler.elements.count)) { try takeSleepDay(next, into: &sink) }
            sleepSink = sink
            if sink.endSeen, !sink.isIncomplete { finishSleepSink() }
        } catch {
            sleepSink = sink
            failSleepTransfer(WatchError.transferAbandoned("\(error); syncing again asks for the days anew"))
        }
    }

    private func takeSleepDay(_ frame: NpkFrame, into sink: inout SleepSink) throws {
        let (_, element) = try sink.assembler.add(frame)
        let day = NpkSleep.records(from: try NpkMessage.parseSleepDay(element))
        rejectedSleepItems += day.rejected.count
        let kept = day.items.filter { sink.range.contains($0.start) }.sorted { $0.start < $1.start }
        if !kept.isEmpty { sink.continuation.yield(kept) }
    }

    /// 05/22: the transfer is over once every day is in; days it overtook get `endGrace` to come.
    func sleepTransferEnded(_ frame: NpkFrame) {
        guard var sink = sleepSink, !retiredSyncSequences.contains(frame.sequence) else {
            staleSyncFramesSeen()
            return
        }
        guard sink.isIncomplete else {
            finishSleepSink()
            return
        }
        sink.endSeen = true
        sleepSink = sink
        let id = sink.id
        Task { [weak self] in
            try? await Task.sleep(for: SleepSink.endGrace)
            await self?.endGraceOver(id)
        }
    }

    private func endGraceOver(_ id: Int) {
        guard let sink = sleepSink, sink.id == id, sink.isIncomplete else { return }
        let error = NpkError(.listIncomplete, "the sync ended after \(sink.assembler.elements.count) of \(sink.assembler.total ?? 0) days")
        failSleepTransfer(WatchError.transferAbandoned("\(error); syncing again asks for the days anew"))
    }

    private func finishSleepSink() {
        guard let sink = sleepSink else { return }
        sleepSink = nil
        sink.continuation.finish()
    }

    func failSleepTransfer(_ error: any Error) {
        guard let sink = sleepSink else { return }
        sleepSink = nil
        for sequence in [sink.sequence, sink.assembler.sequence].compactMap(\.self) { retiredSyncSequences.insert(sequence) }
        sink.continuation.finish(throwing: error)
    }

    private func staleSyncFramesSeen() { staleSyncFrames += 1 }

    /// Gives the transfer up when no day comes for `pageIdleTimeout` (a lost or damaged frame).
    private func watchSleepTransfer(_ id: Int) {
        watchIdle { watch, idle in await watch.sleepTransferIdle(id, idle: idle) }
    }

    /// Every `pageIdleTimeout` until the transfer is over: `check` answers nil (over), true (given
    /// up now) or false (alive).
    func watchIdle(_ check: @escaping @Sendable (NpkWatch, Duration) async -> Bool?) {
        let idle = configuration.pageIdleTimeout
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: idle)
                guard let self, await check(self, idle) == false else { return }
            }
        }
    }

    /// nil: the transfer is over; true: it was given up now; false: it is alive.
    private func sleepTransferIdle(_ id: Int, idle: Duration) -> Bool? {
        guard let sink = sleepSink, sink.id == id else { return nil }
        guard ContinuousClock.now - sink.lastFrame >= idle else { return false }
        flushStream()
        guard sleepSink?.id == id else { return nil }
        failSleepTransfer(WatchError.transferAbandoned("no sleep day came for \(idle); syncing again asks for the days anew"))
        return true
    }
}

extension NpkMessage {
    /// One element of a 05/05 list.
    static func parseSleepDay(_ element: [UInt8]) throws -> TSMetaSleepDay {
        do {
            return try TSMetaSleepDay(serializedBytes: element)
        } catch {
            throw NpkError(.payloadDoesNotParse, "a sleep day (05/05) is not a TSMetaSleepDay (\(error))")
        }
    }
}
