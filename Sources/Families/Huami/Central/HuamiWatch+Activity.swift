import Foundation
import TSDevice
import TSHuami
import TSModels
import TSTransport

/// The transfers fetched on the current link and not yet acknowledged: a sync's heart-rate step
/// and its sleep step read the same transfers, and the acknowledgement covers them.
struct FetchedActivity: Sendable {
    /// The `since` the first transfer was asked from.
    var from: Int64
    var runs: [HuamiActivity] = []
    /// The band had nothing after the last run.
    var complete = false
}

/// The activity fetch (protocol-spec/huami/huami.md §7): per-minute samples since a time, read into
/// sleep items and heart rate (§8, §9), handed over transfer by transfer (a band sends a long
/// history in several), so a sync whose link drops keeps what it stored and goes on from there.
/// The band is acknowledged (`03`) only when the sync has committed what it read
/// (`acknowledgeSleep`, called by `SleepSync` after the store's commit); a transfer that fails
/// hands over nothing, so nothing of it is stored or acknowledged.
extension HuamiWatch {
    /// How far before a sync's start the samples are fetched, so that a night in progress at the
    /// cursor is read whole; what is stored already is not stored twice.
    public static let nightLookback: Int64 = 12 * 3600
    /// Transfers on one link before the band is taken to have sent all it has.
    static let maxFetches = 1000
    /// After a CRC-32 that is not the data's, how long packets beyond the count may still take to
    /// show the band sent more than it announced.
    static let endGrace: Duration = .milliseconds(500)

    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        let runs = try await activityRuns(since: start - Self.nightLookback)
        let (parts, continuation) = AsyncThrowingStream.makeStream(of: [SleepItem].self)
        let producer = Task {
            var reader = HuamiTransferSleepReader()
            func kept(_ items: [SleepItem]) -> [SleepItem] {
                // An item that began before `start` and goes on past it is the one a resumed sync
                // stored cut short: it is handed over again with its whole length (the store keeps one of it).
                items.filter { item in item.end > start && end.map { limit in item.start < limit } ?? true }
            }
            do {
                for try await run in runs {
                    let part = kept(reader.read(run))
                    if !part.isEmpty { continuation.yield(part) }
                }
                let last = kept(reader.finish())
                if !last.isEmpty { continuation.yield(last) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in producer.cancel() }
        return SleepRecordTransfer(total: nil, parts: parts)
    }

    /// The heart rate of each minute the band measured, a transfer a part.
    public func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        let runs = try await activityRuns(since: start - Self.nightLookback)
        let (parts, continuation) = AsyncThrowingStream.makeStream(of: [HeartRateSample].self)
        let producer = Task {
            do {
                for try await run in runs {
                    let part = run.heartRates.filter { sample in
                        let time = Int64(sample.time.timeIntervalSince1970)
                        return time >= start && end.map { time < $0 } ?? true
                    }
                    if !part.isEmpty { continuation.yield(part) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in producer.cancel() }
        return parts
    }

    /// `03` on the fetch-control characteristic, answered `10 03 01`: the band may now drop what
    /// it sent on this link. Nothing fetched on this link: nothing to acknowledge. The band does
    /// not say how much it dropped (0).
    public func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int {
        guard let fetched, !fetched.runs.isEmpty else { return 0 }
        try await exchange(write: (HuamiCharacteristic.fetchControl, HuamiFetchRequest.acknowledge.bytes), what: "the fetch acknowledgement") { channel, bytes -> Void? in
            guard channel == .fetchControl else { return nil }
            let answer = try HuamiFetchAnswer(bytes: bytes)
            if let error = answer.error { throw error }
            guard case .acknowledged = answer else { return nil }
            return ()
        }
        self.fetched = nil
        return 0
    }

    /// The transfers since `since`, one after the other: those fetched on this link already when
    /// they cover `since`, then fetched anew from where the last ended until the band has no more
    /// or has sent up to its clock's minute.
    func activityRuns(since: Int64) async throws -> AsyncThrowingStream<HuamiActivity, any Error> {
        guard connection != nil else { throw WatchError.notConnected }
        let (runs, continuation) = AsyncThrowingStream.makeStream(of: HuamiActivity.self)
        let producer = Task {
            do {
                try await self.fetchRuns(since: since) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in producer.cancel() }
        return runs
    }

    private func fetchRuns(since: Int64, deliver: (HuamiActivity) -> Void) async throws {
        var cursor = since
        if let fetched, fetched.from <= since {
            for run in fetched.runs where run.end > since { deliver(run) }
            if fetched.complete { return }
            cursor = max(since, fetched.runs.last?.end ?? since)
        } else {
            fetched = FetchedActivity(from: since)
        }
        // The band's clock says up to when it recorded; a band whose clock cannot be read sends until it has nothing.
        let bandNow = try? await clock().unixSeconds
        for _ in 0..<Self.maxFetches {
            try Task.checkCancellation()
            guard let run = try await fetchOnce(since: cursor) else { break }
            fetched?.runs.append(run)
            deliver(run)
            guard run.end > cursor else { break }
            cursor = run.end
            if let bandNow, cursor >= bandNow - 60 { break }
        }
        fetched?.complete = true
    }

    static let countMismatchAdvice = ": the band's count is not its data, so nothing of this transfer was stored or acknowledged "
        + "and the band keeps it; sync again, and if it repeats, report the band's model and firmware"

    /// A packet lost, repeated, or out of the one-byte counter's reach is damage on the link, not
    /// in the band, which still holds the transfer (nothing was acknowledged): the transfer is
    /// abandoned as a lost link's is, and a sync fetches it anew on a fresh link. Under EATT a
    /// packet can come hundreds behind its turn (the e2e journey `huami`, eatt, in CI: "packet
    /// counter 183 came while 184 is missing": a packet 255 ahead, or 183 again), past what the
    /// counter can place. Every other fault is the band's and stays as it is.
    static func damagedOnTheLink(_ error: any Error) -> any Error {
        guard let error = error as? HuamiError, [.counterSkipped, .counterRepeated].contains(error.code) else { return error }
        return WatchError.transferAbandoned("\(error.message); nothing of the transfer was stored and the band keeps it, so syncing again fetches it anew")
    }

    /// One data packet into the transfer; more bytes than the band announced is refused with what
    /// to do (the assembler's `countMismatch`): nothing of the transfer is handed over, so nothing is
    /// stored or acknowledged and the band keeps it.
    private static func feed(_ assembler: inout HuamiFetchAssembler, _ packet: [UInt8]) throws {
        // The typed catch, not `catch let error as HuamiError where …` around a throws(HuamiError)
        // call: Swift 6.2.3's SIL verifier (Debian's swiftlang, the arm64 package's compiler)
        // stops on that form ("stack dealloc does not match most recent stack alloc").
        do throws(HuamiError) {
            try assembler.feed(packet)
        } catch {
            guard error.code == .countMismatch else { throw error }
            let message: String = error.message
            throw HuamiError(.countMismatch, message + Self.countMismatchAdvice)
        }
    }

    /// One transfer (§7.1 steps 1–5): nil when the band has nothing since `since`.
    private func fetchOnce(since: Int64) async throws -> HuamiActivity? {
        await takeTurn()
        defer { endTurn() }
        let (deliveries, token) = try beginExchange("the activity fetch")
        defer { endExchange(token) }
        var iterator = deliveries.makeAsyncIterator()
        try await send((HuamiCharacteristic.fetchControl, HuamiFetchRequest.activity(since: since, zone: configuration.timeZone).bytes))
        var announced: (count: UInt32, start: HuamiTime)?
        while announced == nil {
            let (channel, bytes) = try await next(&iterator, timeout: configuration.singleAttemptTimeout, what: "the activity fetch")
            guard channel == .fetchControl else { continue }
            let answer = try HuamiFetchAnswer(bytes: bytes)
            if let error = answer.error { throw error }
            if case let .started(count, start) = answer { announced = (count, start) }
        }
        guard let (count, start) = announced, count > 0 else { return nil }
        var assembler = try HuamiFetchAssembler(count: count, format: sampleFormat)
        try await send((HuamiCharacteristic.fetchControl, HuamiFetchRequest.fetchData.bytes))
        var crc: UInt32?
        var doneSaid = false
        // The first packet answers the write and may come late, as any answer; then the band streams.
        var answered = false
        while !(doneSaid && assembler.isComplete) {
            let delivery: (Channel, [UInt8])
            do {
                // After the band's end, packets still on their way get as long as any packet: the
                // fetch-control and data characteristics are two streams (under EATT over bearers of
                // their own, each forwarded here by a task of its own), so the end can overtake data
                // by more than a moment on a loaded link or machine.
                let wait = answered ? configuration.pageIdleTimeout : configuration.singleAttemptTimeout
                delivery = try await next(&iterator, timeout: wait, what: "the activity data")
                answered = true
            } catch WatchError.timeout {
                if doneSaid { break }
                // The band went quiet before every announced byte came: a link lost whose end is not
                // reported yet (BlueZ may tell later), or a band that stopped. Either way a fresh
                // link cures it (a retry on this one would find the band no longer authenticated);
                // nothing of the transfer was handed over, so nothing was stored or acknowledged.
                let stopped = assembler.abandoned()
                await closeLink()
                throw WatchError.transferAbandoned("\(stopped.message); syncing again fetches it anew")
            }
            switch delivery.0 {
            case .activityData:
                do {
                    try Self.feed(&assembler, delivery.1)
                } catch {
                    // The band goes on sending the rest of this transfer, which would run into the
                    // next exchange on this link as packets of another transfer: the link is closed.
                    await closeLink()
                    throw Self.damagedOnTheLink(error)
                }
            case .fetchControl:
                let answer = try HuamiFetchAnswer(bytes: delivery.1)
                if let error = answer.error { throw error }
                if case let .finished(sent) = answer {
                    crc = sent
                    doneSaid = true
                }
            default:
                continue
            }
        }
        // The data and the end come on two characteristics, so packets the band sent before its end
        // may still be on their way: a CRC-32 that is not the data's says the band sent other bytes
        // than came, and a packet that comes within the grace is more than the band announced.
        if doneSaid, let crc, CRC32.checksum(assembler.data) != crc {
            while true {
                let delivery: (Channel, [UInt8])
                do {
                    delivery = try await next(&iterator, timeout: Self.endGrace, what: "the activity data")
                } catch WatchError.timeout {
                    break
                }
                if delivery.0 == .activityData {
                    do { try Self.feed(&assembler, delivery.1) } catch {
                        await closeLink()
                        throw Self.damagedOnTheLink(error)
                    }
                }
            }
        }
        let data: [UInt8]
        do { data = try assembler.finish(crc32: crc) } catch {
            await closeLink()
            throw Self.damagedOnTheLink(error)
        }
        countReordered(assembler.reordered)
        return try HuamiActivity(start: start, format: sampleFormat, data: data)
    }
}
