import TSDevice
import TSModels
import TSProtocol
import TSTransport

extension Watch {
    /// Sends one request and waits for its response, retransmitting the identical frame on
    /// timeout or NACK (wire-protocol.md §4.1). Requests are serialised: one in flight. A BUSY
    /// right after a finished transfer means the watch missed the final page ack: it is sent
    /// again and the request retried (§4.4).
    func request(_ message: Message) async throws -> Message {
        // A watch without protocol v1 says so at once instead of letting the request time out.
        if connection != nil, !hasProtocolV1 { throw WatchError.unsupported(StandardServicesWatch.protocolV1Features(Self.feature(of: message.command))) }
        var busyRetries = 0
        while true {
            do {
                return try await requestOnce(message)
            } catch let WatchError.rejected(_, status, _) where status == .busy && receiver == nil && busyRetries < configuration.requestRetries {
                guard let done = completedTransfer else { throw WatchError.rejected(command: message.kind, status: status, message: "a sleep transfer is running") }
                busyRetries += 1
                await sendUnanswered(.sleepPageAck(SleepPageAck(transferId: done.id, nextExpected: UInt16(done.pageCount), retransmit: false)))
                try await Task.sleep(for: configuration.requestTimeout / 4)
            }
        }
    }

    private func requestOnce(_ message: Message) async throws -> Message {
        await acquireRequestLine()
        defer { releaseRequestLine() }
        try Task.checkCancellation()
        guard let open = connection else { throw WatchError.notConnected }
        let frame = try message.frame(sequence: sequence)
        sequence &+= 1
        let bytes = try frame.encoded()
        let generation = connectionGeneration
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message, any Error>) in
                pending = PendingRequest(sequence: frame.sequence, command: frame.command, bytes: bytes, attempts: 1, continuation: continuation)
                Task { await self.transmitPending(open: open, generation: generation, sequence: frame.sequence, attempt: 1) }
            }
        } onCancel: {
            Task { await self.cancelPending(sequence: frame.sequence) }
        }
    }

    private func acquireRequestLine() async {
        if !requestLineBusy {
            requestLineBusy = true
            return
        }
        await withCheckedContinuation { requestLineWaiters.append($0) }
    }

    private func releaseRequestLine() {
        if requestLineWaiters.isEmpty {
            requestLineBusy = false
        } else {
            requestLineWaiters.removeFirst().resume()
        }
    }

    private func cancelPending(sequence: UInt8) {
        guard let waiting = pending, waiting.sequence == sequence else { return }
        pending = nil
        waiting.continuation.resume(throwing: CancellationError())
    }

    /// Writes the pending request's frame and arms its timeout.
    private func transmitPending(open: any TransportConnection, generation: Int, sequence: UInt8, attempt: Int) async {
        guard let waiting = pending, waiting.sequence == sequence, waiting.attempts == attempt, generation == connectionGeneration else { return }
        configuration.traffic?("writing \(Self.name(of: waiting.command)) seq \(sequence)\(attempt > 1 ? " again (attempt \(attempt))" : "")")
        do {
            try await write(waiting.bytes, to: open)
        } catch let error as TransportError where error.isReplayDeparture {
            // A replay that left its capture: the request fails with what differed; no link ended.
            pending = nil
            waiting.continuation.resume(throwing: error)
            return
        } catch {
            linkEnded(generation: generation, reason: "write failed: \(error)")
            return
        }
        let timeout = configuration.requestTimeout
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.requestTimedOut(open: open, generation: generation, sequence: sequence, attempt: attempt)
        }
    }

    private func requestTimedOut(open: any TransportConnection, generation: Int, sequence: UInt8, attempt: Int) async {
        guard let waiting = pending, waiting.sequence == sequence, waiting.attempts == attempt else { return }
        await retransmitPending(open: open, generation: generation)
    }

    /// Sends the pending request again, or fails it once the retries are used up.
    func retransmitPending(open: any TransportConnection, generation: Int) async {
        guard var waiting = pending else { return }
        guard waiting.attempts <= configuration.requestRetries else {
            pending = nil
            waiting.continuation.resume(throwing: WatchError.timeout(command: Self.name(of: waiting.command), attempts: waiting.attempts))
            return
        }
        waiting.attempts += 1
        pending = waiting
        await transmitPending(open: open, generation: generation, sequence: waiting.sequence, attempt: waiting.attempts)
    }

    func write(_ bytes: [UInt8], to open: any TransportConnection) async throws {
        for chunk in Fragmenter.chunks(of: bytes, mtu: open.mtu) {
            try await open.write(chunk)
        }
    }

    /// Sends a frame that needs no response (event ack, page ack, NACK); a failed write ends the
    /// link. Returns the sequence number used.
    @discardableResult
    func sendUnanswered(_ message: Message, sequence explicit: UInt8? = nil) async -> UInt8? {
        guard let open = connection else { return nil }
        let number: UInt8
        if let explicit {
            number = explicit
        } else {
            number = sequence
            sequence &+= 1
        }
        guard let bytes = try? message.frame(sequence: number).encoded() else { return nil }
        let generation = connectionGeneration
        do {
            try await write(bytes, to: open)
        } catch {
            linkEnded(generation: generation, reason: "write failed: \(error)")
        }
        return number
    }

    // MARK: Incoming

    package func received(_ chunk: [UInt8]) async {
        for received in reassembler.append(chunk, at: clock.now - epoch) {
            switch received {
            case let .frame(frame): await handle(frame)
            case let .corrupt(corrupt): await handleCorrupt(corrupt)
            case .garbage: break
            }
        }
    }

    private func handle(_ frame: Frame) async {
        if let traffic = configuration.traffic, frame.command != .sleepPage {
            let waiting = pending.map { $0.sequence == frame.sequence && frame.flags.contains(.response) } ?? false
            traffic("\(Self.name(of: frame.command)) frame seq \(frame.sequence) → " + (waiting ? "the waiting request" : "no request waits for it: read as the watch's own news"))
        }
        let message: Message
        do {
            message = try Message(frame: frame)
        } catch {
            // A well-formed frame with an invalid payload: answer a pending request with the
            // violation rather than waiting for a timeout.
            if let waiting = pending, frame.flags.contains(.response), waiting.sequence == frame.sequence {
                pending = nil
                waiting.continuation.resume(throwing: WatchError.protocolViolation("\(Self.name(of: frame.command)) response: \(error.message)"))
            }
            return
        }
        switch message {
        case let .error(report):
            if let waiting = pending, waiting.sequence == frame.sequence {
                pending = nil
                waiting.continuation.resume(throwing: WatchError.rejected(command: Self.name(of: waiting.command), status: report.status, message: report.message))
            } else if report.status == .unknownTransfer, let current = receiver, current.lastAckSequence == report.sequence {
                // The watch dropped the running transfer. Errors answering older acks (duplicated
                // packets, acks of a finished transfer) do not concern it.
                current.fail(WatchError.transferAbandoned(report.message))
                receiver = nil
            }
        case let .nack(report):
            if report.status == .crcMismatch, let waiting = pending, waiting.sequence == report.sequence, let open = connection {
                await retransmitPending(open: open, generation: connectionGeneration)
            }
        case let .sleepPage(page):
            await receivePage(page)
        case let .alarmsChanged(change):
            await acknowledgeEvent(frame) {
                if smartWindowOutsideNegotiation(change.alarms) != nil {
                    rejectedEvents += 1
                } else {
                    alarmEvents.send(change)
                    watchEvents.send(.alarmsChanged(AlarmTableChange(change)))
                }
            }
        case let .liveStage(stage):
            await acknowledgeEvent(frame) {
                liveEvents.send(stage)
                watchEvents.send(.liveStage(LiveStage(stage)))
            }
        case let .alarmAlert(alert):
            await acknowledgeEvent(frame) {
                if extensions.enabled.contains(.alarmAlerts) {
                    alertEvents.send(alert)
                    watchEvents.send(.alarmAlert(AlarmAlertNotice(alert)))
                } else {
                    rejectedEvents += 1
                }
            }
        default:
            guard message.form == .response, let waiting = pending, waiting.sequence == frame.sequence, waiting.command == frame.command else { return }
            pending = nil
            if case let .sleepQueryResponse(header) = message {
                beginTransfer(header)   // before the pages behind this frame are handled
            }
            waiting.continuation.resume(returning: message)
        }
    }

    private func acknowledgeEvent(_ frame: Frame, deliver: () -> Void) async {
        let ack: Message = switch frame.command {
        case .alarmsChanged: .alarmsChangedAck
        case .alarmAlert: .alarmAlertAck
        default: .liveStageAck
        }
        let isRepeat = lastEvent?.sequence == frame.sequence && lastEvent?.command == frame.command
        lastEvent = (frame.sequence, frame.command)
        if !isRepeat { deliver() }
        await sendUnanswered(ack, sequence: frame.sequence)
    }

    private func handleCorrupt(_ corrupt: FrameReassembler.CorruptFrame) async {
        if receiver != nil {
            await requestPageRetransmission()
            return
        }
        let report = ErrorReport(status: .crcMismatch, command: corrupt.header.command.rawValue, sequence: corrupt.header.sequence,
                                 message: "frame arrived with a bad CRC")
        await sendUnanswered(.nack(report))
    }

    static func name(of command: CommandID) -> String {
        let names: [CommandID: String] = [
            .hello: "HELLO", .deviceInfo: "DEVICE_INFO", .timeSet: "TIME_SET", .battery: "BATTERY",
            .alarmsGet: "ALARMS_GET", .alarmsSet: "ALARMS_SET", .alarmsChanged: "ALARMS_CHANGED",
            .monitorGet: "MONITOR_GET", .monitorSet: "MONITOR_SET", .sleepQuery: "SLEEP_QUERY", .sleepPage: "SLEEP_PAGE",
            .sleepPageAck: "SLEEP_PAGE_ACK", .sleepCommit: "SLEEP_COMMIT", .sleepAbort: "SLEEP_ABORT",
            .liveSubscribe: "LIVE_SUBSCRIBE", .liveStage: "LIVE_STAGE", .error: "ERROR",
            .extensions: "EXTENSIONS", .ring: "RING", .alarmAlert: "ALARM_ALERT",
        ]
        return names[command] ?? "command \(command)"
    }
}
