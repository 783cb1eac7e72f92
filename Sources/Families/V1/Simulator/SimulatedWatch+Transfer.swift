import TSGATT
import TSModels
import TSProtocol
import TSSimulatedHistory

extension SimulatedWatch {
    /// A running windowed transfer of sleep pages (wire-protocol.md §4.4).
    struct Transfer {
        var id: UInt16
        var records: [SleepItem]
        var perPage: Int
        var window: Int
        var nextToSend = 0
        var oldestUnacked = 0
        var timeoutsWithoutProgress = 0
        var timerGeneration = 0
        var pumping = false

        var pageCount: Int { (records.count + perPage - 1) / perPage }
    }

    /// Records per page: as many as fill two notifications, so pages cost whole packets.
    static func recordsPerPage(mtu: ATTMTU, total: Int) -> Int {
        let frameBudget = min(2 * mtu.chunkSize, Frame.maxPayload + Frame.overhead)
        let fitting = (frameBudget - Frame.overhead - SleepPage.headerSize) / SleepPage.recordSize
        let needed = (total + 65_534) / 65_535
        return min(255, max(1, fitting, needed))
    }

    func startTransfer(_ query: SleepQuery) -> Message {
        let range = Int64(query.start)..<Int64(query.end ?? SleepQuery.openEnd)
        let selected = state.records.filter { range.contains($0.start) }
        let perPage = Self.recordsPerPage(mtu: link?.mtu ?? .default, total: selected.count)
        let window = Int(min(query.window, configuration.maxWindow))
        let id = nextTransferId
        nextTransferId = nextTransferId == UInt16.max ? 1 : nextTransferId + 1
        if !selected.isEmpty {
            transfer = Transfer(id: id, records: selected, perPage: perPage, window: window)
        }
        return .sleepQueryResponse(SleepTransfer(transferId: id, total: UInt32(selected.count), recordsPerPage: UInt8(perPage), window: UInt8(window)))
    }

    func handlePageAck(_ ack: SleepPageAck, frame: Frame) async {
        guard var current = transfer, current.id == ack.transferId else {
            await reply(to: frame, .error(ErrorReport(status: .unknownTransfer, command: frame.command.rawValue, sequence: frame.sequence,
                                                      message: "transfer \(ack.transferId) is not running")))
            return
        }
        let acknowledged = min(Int(ack.nextExpected), current.pageCount)
        if acknowledged > current.oldestUnacked {
            statistics.pagesAcknowledged += acknowledged - current.oldestUnacked
            current.oldestUnacked = acknowledged
            current.timeoutsWithoutProgress = 0
        }
        if ack.retransmit {
            statistics.pagesResent += max(0, current.nextToSend - acknowledged)
            current.nextToSend = acknowledged
        }
        current.nextToSend = max(current.nextToSend, current.oldestUnacked)
        if current.oldestUnacked >= current.pageCount {
            transfer = nil
            return
        }
        transfer = current
        await pumpPages()
    }

    /// Sends pages while the window allows; the loop re-reads the state after every send, so
    /// acks arriving meanwhile take effect at once.
    func pumpPages() async {
        guard var current = transfer, !current.pumping else { return }
        transfer?.pumping = true
        while let running = transfer, running.id == current.id,
              running.nextToSend < running.pageCount, running.nextToSend - running.oldestUnacked < running.window {
            current = running
            let index = current.nextToSend
            let records = Array(current.records[(index * current.perPage)..<min((index + 1) * current.perPage, current.records.count)])
            let page = SleepPage(transferId: current.id, page: UInt16(index), last: index == current.pageCount - 1, records: records)
            transfer?.nextToSend = index + 1
            statistics.pagesSent += 1
            await sendOwn(.sleepPage(page))
        }
        transfer?.pumping = false
        armPageTimer()
    }

    private func armPageTimer() {
        guard var current = transfer else { return }
        current.timerGeneration += 1
        transfer = current
        let generation = current.timerGeneration
        let id = current.id
        let timeout = configuration.pageRetransmitTimeout
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.pageTimerFired(transferId: id, generation: generation)
        }
    }

    private func pageTimerFired(transferId: UInt16, generation: Int) async {
        guard var current = transfer, current.id == transferId, current.timerGeneration == generation else { return }
        current.timeoutsWithoutProgress += 1
        if current.timeoutsWithoutProgress > 5 {
            transfer = nil
            return
        }
        statistics.pagesResent += current.nextToSend - current.oldestUnacked
        current.nextToSend = current.oldestUnacked
        transfer = current
        await pumpPages()
    }

    // MARK: Events

    func sendEvent(_ message: Message) async {
        guard link != nil, let frame = await sendOwn(message) else { return }
        link?.pendingEvent = PendingEvent(frame: frame, attempts: 1)
        let generation = link?.generation
        let timeout = configuration.eventRetransmitTimeout
        Task { [weak self] in
            for _ in 0..<3 {
                try? await Task.sleep(for: timeout)
                guard let self, await self.resendPendingEvent(frame, generation: generation) else { return }
            }
        }
    }

    /// Resends `frame` if it is still unacknowledged on the same connection; false when done.
    private func resendPendingEvent(_ frame: Frame, generation: Int?) async -> Bool {
        guard let current = link, current.generation == generation, let pending = current.pendingEvent, pending.frame == frame,
              let bytes = try? frame.encoded()
        else { return false }
        link?.pendingEvent?.attempts += 1
        await transmit(bytes)
        return true
    }
}

extension SimulatedWatch {
    /// Calls `observer` with every SLEEP_COMMIT the watch accepts, before it answers it.
    public func onSleepCommit(_ observer: @escaping @Sendable (AcceptedSleepCommit) -> Void) {
        commitObservers.append(observer)
    }
}
