import Foundation
import SwiftProtobuf
import TSDevice
import TSModels
import TSNpk

/// One heart-rate sync in progress: the list frames of its days, collected in order.
struct HeartRateSink {
    var id: Int
    /// The sync start's sequence, once its answer came.
    var sequence: UInt16?
    var range: Range<Int64>
    var assembler = NpkListAssembler()
    var continuation: AsyncThrowingStream<[HeartRateSample], any Error>.Continuation
    var lastFrame: ContinuousClock.Instant = .now
}

/// The watch's own heart-rate history by range: 05/21 type 1, list frames 05/01 (one
/// `TSMetaHeartRateDay` each: a reading every 5 minutes and the manual measurements), 05/22.
/// A broken list (a lost or damaged frame) fails the transfer as recoverable, so the sync asks
/// again; a day that does not parse and a reading out of range are refused and counted
/// (`rejectedHeartRateDays`, `rejectedHeartRateReadings`): asking again would bring the same bytes.
extension NpkWatch {
    public func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        guard connection != nil else { throw WatchError.notConnected }
        let until = end ?? Int64(configuration.now().timeIntervalSince1970) + 1
        guard start < until else { return AsyncThrowingStream { $0.finish() } }
        let startRequest = try NpkSyncType.heartRate.startRequest(fromUnix: start, toUnix: until)
        let (parts, continuation) = AsyncThrowingStream.makeStream(of: [HeartRateSample].self)
        // The sink is in place before the request goes out: the days may follow the answer at once.
        failHeartRateTransfer(WatchError.transferAbandoned("a new heart-rate transfer started"))
        let id = Int.random(in: 0...Int.max)
        heartRateSink = HeartRateSink(id: id, range: start..<until, continuation: continuation)
        let answer: NpkFrame
        let result: NpkSyncStartResult
        do {
            answer = try await request(.syncStart, message: startRequest)
            result = NpkSyncStartResult(try answer.payload(as: TSMetaSyncStartResponse.self))
        } catch {
            endHeartRateSink(id)
            throw error
        }
        switch result {
        case .nothingNew:
            endHeartRateSink(id)
            continuation.finish()
        case let .failed(code):
            endHeartRateSink(id)
            throw NpkRefusal(command: .syncStart, result: code)
        case .started:
            if heartRateSink?.id == id { heartRateSink?.sequence = answer.sequence }
            watchHeartRateTransfer(id)
        }
        return parts
    }

    private func endHeartRateSink(_ id: Int) {
        if heartRateSink?.id == id { heartRateSink = nil }
    }

    func heartRateFrame(_ frame: NpkFrame) {
        guard var sink = heartRateSink, !retiredSyncSequences.contains(frame.sequence) else {
            staleSyncFrames += 1
            return
        }
        let element: [UInt8]
        do {
            element = try sink.assembler.add(frame).element
        } catch {
            failHeartRateTransfer(WatchError.transferAbandoned("\(error); syncing again asks for the heart rate anew"))
            return
        }
        sink.lastFrame = .now
        heartRateSink = sink
        guard let day = try? TSMetaHeartRateDay(serializedBytes: element) else {
            rejectedHeartRateDays += 1
            return
        }
        let samples = NpkHeartRate.samples(from: day)
        rejectedHeartRateReadings += samples.rejectedManualReadings
        let kept = samples.samples.filter { sink.range.contains(Int64($0.time.timeIntervalSince1970)) }
        if !kept.isEmpty { sink.continuation.yield(kept) }
    }

    func heartRateTransferEnded(_ frame: NpkFrame) {
        guard let sink = heartRateSink, !retiredSyncSequences.contains(frame.sequence) else {
            staleSyncFrames += 1
            return
        }
        if sink.assembler.total != nil, !sink.assembler.isComplete {
            let error = NpkError(.listIncomplete, "the heart-rate sync ended after \(sink.assembler.elements.count) of \(sink.assembler.total ?? 0) days")
            failHeartRateTransfer(WatchError.transferAbandoned("\(error); syncing again asks for the heart rate anew"))
            return
        }
        heartRateSink = nil
        sink.continuation.finish()
    }

    func failHeartRateTransfer(_ error: any Error) {
        guard let sink = heartRateSink else { return }
        heartRateSink = nil
        for sequence in [sink.sequence, sink.assembler.sequence].compactMap(\.self) { retiredSyncSequences.insert(sequence) }
        sink.continuation.finish(throwing: error)
    }

    /// Gives the transfer up when no day comes for `pageIdleTimeout` (a lost or damaged frame).
    private func watchHeartRateTransfer(_ id: Int) {
        watchIdle { watch, idle in await watch.heartRateTransferIdle(id, idle: idle) }
    }

    /// nil: the transfer is over; true: it was given up now; false: it is alive.
    private func heartRateTransferIdle(_ id: Int, idle: Duration) -> Bool? {
        guard let sink = heartRateSink, sink.id == id else { return nil }
        guard ContinuousClock.now - sink.lastFrame >= idle else { return false }
        flushStream()
        guard heartRateSink?.id == id else { return nil }
        failHeartRateTransfer(WatchError.transferAbandoned("no heart-rate day came for \(idle); syncing again asks for the heart rate anew"))
        return true
    }
}
