import Foundation
import TSDevice
import TSModels
import TSQRing

/// Sleep (big data, type 0x27) and the five-minute heart-rate log of a QRing ring. The ring
/// answers with what it holds (several days) and takes no acknowledgement; the gateway keeps
/// what falls in the range asked for.
extension QRingWatch {
    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        guard connection != nil else { throw WatchError.notConnected }
        guard capabilities.sleepSync != nil else { throw WatchError.unsupported("sleep records (this ring has no big-data service)") }
        let until = end ?? Int64(configuration.now().timeIntervalSince1970) + 1
        guard start < until else { return SleepRecordTransfer(total: 0, parts: AsyncThrowingStream { $0.finish() }) }
        let payload = try await bigDataRequest(BigDataFrame.sleepRequest)
        let today = RingClock.today(at: configuration.now(), in: configuration.timeZone)
        let days = try RingSleep.days(payload: payload, today: today, zone: configuration.timeZone)
        dropped.sleepPairs += days.reduce(0) { $0 + $1.droppedPairs }
        let parts = days.sorted { $0.start < $1.start }
            .map { day in day.items.filter { (start..<until).contains($0.start) } }
            .filter { !$0.isEmpty }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [SleepItem].self)
        parts.forEach { continuation.yield($0) }
        continuation.finish()
        return SleepRecordTransfer(total: parts.reduce(0) { $0 + $1.count }, parts: stream)
    }

    /// One day's log per part, the days of the range on the ring's clock up to its today.
    public func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        guard connection != nil else { throw WatchError.notConnected }
        let zone = configuration.timeZone
        let now = configuration.now()
        let until = end ?? Int64(now.timeIntervalSince1970) + 1
        let range = start..<max(start, until)
        let first = RingDateTime(Date(timeIntervalSince1970: TimeInterval(start)), in: zone).date
        let last = min(RingDateTime(Date(timeIntervalSince1970: TimeInterval(until - 1)), in: zone).date, RingClock.today(at: now, in: zone))
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [HeartRateSample].self)
        let task = Task {
            do {
                var day = first
                while !range.isEmpty, day <= last {
                    try Task.checkCancellation()
                    if case let .samples(samples, _) = try await self.heartRateLog(day: day) {
                        let kept = samples.filter { range.contains(Int64($0.time.timeIntervalSince1970)) }
                        if !kept.isEmpty { continuation.yield(kept) }
                    }
                    day = day.adding(days: 1)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The heart-rate log of one day on the ring's clock. A packet missing from the run of its
    /// answer (lost, or overtaken: under EATT one characteristic's notifications travel over
    /// several bearers, and the e2e journey `qring` (eatt) once met packet 15 before 14) is
    /// damage on the link, not in the ring, which still holds its log: the link is closed and
    /// the request given up as a lost link's, so a sync asks anew on a fresh link.
    public func heartRateLog(day: RingDate) async throws -> HeartRateLog {
        var assembler = HeartRateLogAssembler(day: day, zone: configuration.timeZone)
        do {
            return try await exchange(QRingRequest.heartRateLog(day: day)) { bytes in try assembler.feed(bytes) }
        } catch let error as QRingError where error.code == .outOfOrder {
            await closeLink()
            throw WatchError.transferAbandoned("\(error.message); the ring keeps its log, so syncing again asks anew")
        } catch let error as WatchError {
            // The wait ended having seen only another day's log: say so, not just that none came.
            guard let other = assembler.passedOver else { throw error }
            throw QRingError(.dayMismatch, "the ring answered with the heart-rate log of \(other), not of \(day) (\(error))")
        }
    }

    /// The steps of the day `daysAgo` days before the ring's today, a quarter-hour each (not on
    /// the seam yet: the project stores no steps).
    public func steps(daysAgo: Int) async throws -> [RingStepsInterval] {
        guard (0...255).contains(daysAgo) else { throw QRingError(.valueOutOfRange, "the ring keeps steps by days ago 0…255, not \(daysAgo)") }
        var assembler = StepsAssembler(zone: configuration.timeZone)
        return try await exchange(QRingRequest.steps(daysAgo: UInt8(daysAgo))) { bytes in try assembler.feed(bytes) }
    }

    /// Writes a big-data request and waits for the reply frame. A reply that stops arriving for
    /// `pageIdleTimeout` is dropped and counted (`drops`), and the transfer is given up:
    /// syncing again asks anew.
    func bigDataRequest(_ frame: BigDataFrame) async throws -> [UInt8] {
        guard let link = connection else { throw WatchError.notConnected }
        let (replies, continuation) = AsyncStream.makeStream(of: Delivery.self)
        bigDataSink = continuation
        bigDataProgress = .now
        defer {
            bigDataSink = nil
            continuation.finish()
        }
        let idle = configuration.pageIdleTimeout
        let timer = Task { [weak self] in
            while true {
                try await Task.sleep(for: idle)
                guard let self, await self.bigDataIdle(for: idle) else { continue }
                continuation.yield(.timedOut(afterPackets: 0))
                return
            }
        }
        defer { timer.cancel() }
        let bytes = frame.bytes
        for offset in stride(from: 0, to: bytes.count, by: link.mtu.chunkSize) {
            try await link.writeSecondChannel(Array(bytes[offset..<min(bytes.count, offset + link.mtu.chunkSize)]))
        }
        for await reply in replies {
            switch reply {
            case let .bytes(payload):
                return payload
            case .timedOut:
                let before = (bigData.crcMismatches, bigData.incomplete)
                bigData.expire()
                let what = bigData.incomplete > before.1 ? "its bytes stopped before the length it announced"
                    : "no reply with a matching CRC came (\(bigData.crcMismatches) CRC mismatches so far)"
                throw WatchError.transferAbandoned("the ring's sleep reply was dropped: \(what) within \(idle); syncing again asks anew")
            case let .linkLost(reason):
                bigData.expire()
                throw WatchError.disconnected(reason)
            }
        }
        throw WatchError.disconnected("the link ended while waiting for the sleep reply")
    }

    private func bigDataIdle(for idle: Duration) -> Bool { ContinuousClock.now - bigDataProgress >= idle }
}
