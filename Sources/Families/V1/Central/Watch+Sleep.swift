import TSDevice
import TSModels
import TSProtocol

/// The central's half of a windowed sleep transfer (wire-protocol.md §4.4).
struct SleepReceiver {
    var query: SleepQuery
    var header: SleepTransfer?
    var continuation: AsyncThrowingStream<SleepPage, any Error>.Continuation
    var nextExpected = 0
    var acceptedSinceAck = 0
    var lastRetransmitRequest: (page: Int, at: Duration)?
    var lastPageAt: Duration
    var idleRetries = 0
    /// Sequence number of the latest SLEEP_PAGE_ACK sent for this transfer.
    var lastAckSequence: UInt8?

    func fail(_ error: any Error) { continuation.finish(throwing: error) }
}

extension Watch {
    /// Starts a SLEEP_QUERY for records with start in [start, end) (end nil = no end) and
    /// returns the watch's transfer header and the pages, in order, each exactly once. The
    /// stream fails if the link drops or the watch stops sending; pages already yielded stay valid.
    public func sleepPages(start: UInt32, end: UInt32?) async throws -> (SleepTransfer, AsyncThrowingStream<SleepPage, any Error>) {
        guard receiver == nil else { throw WatchError.unsupported("two sleep transfers at once") }
        let query = SleepQuery(start: start, end: end, window: configuration.window)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SleepPage.self, throwing: (any Error).self)
        receiver = SleepReceiver(query: query, continuation: continuation, lastPageAt: clock.now - epoch)
        let header: SleepTransfer
        do {
            header = try await expect(.sleepQueryRequest(query)) { if case let .sleepQueryResponse(transfer) = $0 { transfer } else { nil } }
        } catch {
            receiver = nil
            continuation.finish(throwing: error)
            throw error
        }
        if header.total > 0, receiver != nil { watchForIdleTransfer(transferId: header.transferId) }
        return (header, stream)
    }

    /// All records of [start, end) in one array (for small ranges and tests).
    public func sleepRecords(start: UInt32, end: UInt32?) async throws -> [SleepItem] {
        let (_, pages) = try await sleepPages(start: start, end: end)
        var records: [SleepItem] = []
        for try await page in pages { records += page.records }
        return records
    }

    func beginTransfer(_ header: SleepTransfer) {
        guard var current = receiver else { return }
        current.header = header
        current.lastPageAt = clock.now - epoch
        receiver = current
        if header.total == 0 {
            current.continuation.finish()
            receiver = nil
        }
    }

    func receivePage(_ page: SleepPage) async {
        guard var current = receiver, let header = current.header, page.transferId == header.transferId else {
            if let done = completedTransfer, done.id == page.transferId {
                await sendUnanswered(.sleepPageAck(SleepPageAck(transferId: done.id, nextExpected: UInt16(done.pageCount), retransmit: false)))
            }
            return
        }
        current.lastPageAt = clock.now - epoch
        current.idleRetries = 0
        let index = Int(page.page)
        if index > current.nextExpected {
            receiver = current
            await requestPageRetransmission()
            return
        }
        if index < current.nextExpected {
            receiver = current
            await sendPageAck(transferId: header.transferId, nextExpected: current.nextExpected, retransmit: false)
            return
        }
        if let violation = violation(in: page, header: header, query: current.query) {
            receiver = nil
            current.fail(WatchError.protocolViolation(violation))
            return
        }
        current.continuation.yield(page)
        current.nextExpected += 1
        current.acceptedSinceAck += 1
        let finished = current.nextExpected == header.pageCount
        let ackEvery = (Int(header.window) + 1) / 2
        if finished || current.acceptedSinceAck >= ackEvery {
            current.acceptedSinceAck = 0
            receiver = current
            await sendPageAck(transferId: header.transferId, nextExpected: current.nextExpected, retransmit: false)
        }
        if finished {
            current.continuation.finish()
            completedTransfer = (header.transferId, header.pageCount)
            receiver = nil
        } else if receiver != nil {
            receiver = current
        }
    }

    private func violation(in page: SleepPage, header: SleepTransfer, query: SleepQuery) -> String? {
        let isLast = Int(page.page) == header.pageCount - 1
        if page.last != isLast {
            return "page \(page.page) of \(header.pageCount) has the LAST flag \(page.last ? "set" : "clear")"
        }
        let expectedCount = isLast ? Int(header.total) - Int(page.page) * Int(header.recordsPerPage) : Int(header.recordsPerPage)
        if page.records.count != expectedCount {
            return "page \(page.page) holds \(page.records.count) records, expected \(expectedCount)"
        }
        let range = Int64(query.start)..<Int64(query.end ?? SleepQuery.openEnd)
        if let outside = page.records.first(where: { !range.contains($0.start) }) {
            return "page \(page.page) has a record starting at \(outside.start), outside the queried range"
        }
        return nil
    }

    /// Asks the watch to go back to the first missing page, at most once per page per second.
    func requestPageRetransmission() async {
        guard var current = receiver, let header = current.header else { return }
        let now = clock.now - epoch
        if let last = current.lastRetransmitRequest, last.page == current.nextExpected, now - last.at < .seconds(1) { return }
        current.lastRetransmitRequest = (current.nextExpected, now)
        current.acceptedSinceAck = 0
        receiver = current
        await sendPageAck(transferId: header.transferId, nextExpected: current.nextExpected, retransmit: true)
    }

    /// Sends a SLEEP_PAGE_ACK and remembers its sequence number for the running transfer.
    private func sendPageAck(transferId: UInt16, nextExpected: Int, retransmit: Bool) async {
        let ack = SleepPageAck(transferId: transferId, nextExpected: UInt16(clamping: nextExpected), retransmit: retransmit)
        let sequence = await sendUnanswered(.sleepPageAck(ack))
        if receiver?.header?.transferId == transferId { receiver?.lastAckSequence = sequence }
    }

    private func watchForIdleTransfer(transferId: UInt16) {
        let timeout = configuration.pageIdleTimeout
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: timeout)
                guard let self, await self.checkIdleTransfer(transferId: transferId) else { return }
            }
        }
    }

    /// Called every idle period while the transfer runs; false once it is over.
    private func checkIdleTransfer(transferId: UInt16) async -> Bool {
        guard var current = receiver, let header = current.header, header.transferId == transferId else { return false }
        let now = clock.now - epoch
        guard now - current.lastPageAt >= configuration.pageIdleTimeout else { return true }
        current.idleRetries += 1
        current.lastPageAt = now
        if current.idleRetries > configuration.pageIdleRetries {
            receiver = nil
            current.fail(WatchError.timeout(command: "SLEEP_PAGE", attempts: current.idleRetries))
            await sendUnanswered(.sleepAbortRequest(SleepAbort(transferId: transferId)))
            return false
        }
        current.lastRetransmitRequest = nil
        receiver = current
        await requestPageRetransmission()
        return true
    }
}
