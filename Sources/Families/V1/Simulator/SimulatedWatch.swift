import Foundation
import TSGATT
import TSModels
import TSProtocol
import TSSimulatedHistory
import TSTransport

/// The watch side of protocol v1 and v1.1, faithful enough to stand in for firmware: HELLO
/// negotiation, duplicate-request replay, NACKs, BUSY during transfers, windowed go-back-N sleep
/// pages with retransmission, durable-commit deletion, acknowledged events; and version 1.1's
/// EXTENSIONS, smart windows, RING and alarm alerts (or none of them, as a version-1 watch). It serves one central at a
/// time through `PeripheralEndpoint` (loopback) and, later, a BlueZ GATT application.
public actor SimulatedWatch: PeripheralEndpoint {
    public let configuration: SimulatorConfiguration
    public internal(set) var state: SimulatorState
    /// How many times a central set the watch's clock (TIME_SET).
    public private(set) var timeSets = 0
    /// Every sleep range a central acknowledged (SLEEP_COMMIT with the right count), in order,
    /// with when: what a destructive watch would have deleted (tests of "acknowledged only once stored").
    public private(set) var acknowledgements: [SleepAcknowledgement] = []
    /// Frames the watch received and sent, for tests that look at the conversation.
    public internal(set) var statistics = Statistics()

    public struct Statistics: Sendable, Hashable {
        public var framesReceived = 0
        public var corruptFramesReceived = 0
        public var duplicateRequests = 0
        /// Responses sent a second time (`SimulatorConfiguration.answersTwice`).
        public var responsesRepeated = 0
        public var pagesSent = 0
        public var pagesResent = 0
        public var pagesAcknowledged = 0
        public var connections = 0
    }

    var link: Link?
    var transfer: Transfer?
    var nextTransferId: UInt16 = 1
    /// Rings, snoozes and smart wake, driven by `advanceClock(to:)` and the live ticker.
    public internal(set) var alarmClock: WatchAlarmClock
    /// The wearer's sleep stage as the watch's sensors see it; nil: not worn, or no stage yet.
    public internal(set) var wearerStage: SleepStage?
    /// Every alert the watch raised, whether or not a central heard it.
    public internal(set) var alertLog: [AlarmAlert] = []
    /// Every alarm edit made on the watch itself, oldest first, with whether a central
    /// acknowledged its announcement (ground truth for soaks: `WatchSideEdits.swift`).
    /// With a journal (`keepWatchSideEdits(in:)`), only the newest of them; the rest are there.
    public internal(set) var watchSideEdits: [WatchSideEdit] = []
    var watchSideEditJournal: WatchSideEditJournal?
    var alertObservers: [@Sendable (AlarmAlert) -> Void] = []
    var commitObservers: [@Sendable (AcceptedSleepCommit) -> Void] = []
    /// What a request's handling must do once its response is out (alerts of a RING).
    var afterResponse: [WatchAlarmClock.Change] = []
    private let clock = ContinuousClock()
    private let epoch = ContinuousClock.now

    struct Link {
        var mtu: ATTMTU
        var send: @Sendable ([UInt8]) async -> Void
        var reassembler = FrameReassembler()
        var greeted = false
        var sequence: UInt8 = 0
        var lastRequest: (sequence: UInt8, command: CommandID, response: [UInt8])?
        var liveSubscribed = false
        /// Version-1.1 features EXTENSIONS enabled on this connection.
        var extensions: ExtensionFeatures = []
        var pendingEvent: PendingEvent?
        var generation: Int
    }

    struct PendingEvent {
        var frame: Frame
        var attempts: Int
    }

    public init(configuration: SimulatorConfiguration = SimulatorConfiguration(), state: SimulatorState = SimulatorState()) {
        self.configuration = configuration
        self.state = state
        alarmClock = WatchAlarmClock(ringDuration: configuration.ringDuration, snoozeMinutes: configuration.snoozeMinutes)
    }

    // MARK: PeripheralEndpoint

    public func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {
        statistics.connections += 1
        transfer = nil
        link = Link(mtu: mtu, send: send, generation: statistics.connections)
    }

    /// The link's ATT MTU as the GATT server learned it (BlueZ reports it with each write).
    /// Before HELLO it is the ceiling the negotiation starts from; after, it lowers the current one.
    public func linkMTUChanged(_ mtu: ATTMTU) {
        guard let current = link else { return }
        link?.mtu = current.greeted && current.mtu.value < mtu.value ? current.mtu : mtu
    }

    public func centralDisconnected() async {
        link = nil
        transfer = nil
    }

    public func centralWrote(_ chunk: [UInt8]) async {
        guard var current = link else { return }
        let events = current.reassembler.append(chunk, at: clock.now - epoch)
        link?.reassembler = current.reassembler
        for event in events {
            switch event {
            case let .frame(frame):
                statistics.framesReceived += 1
                await handle(frame)
            case let .corrupt(corrupt):
                statistics.corruptFramesReceived += 1
                await sendNack(for: corrupt)
            case .garbage:
                break
            }
        }
    }

    // MARK: Watch-side actions

    /// Edits the alarm table as a person would on the watch, and announces the new table.
    public func editAlarmsOnWatch(origin: AlarmChangeOrigin = .watch, _ edit: @Sendable (inout [Alarm]) -> Void) async {
        edit(&state.alarms)
        state.alarms.sort { $0.slot < $1.slot }
        let announced = alarmsAsSent
        noteWatchSideEdit(origin: origin, alarms: announced)
        await sendEvent(.alarmsChanged(AlarmsChanged(origin: origin, alarms: announced)))
    }

    /// What a person does on the wrist in demos and tests: sets a 07:00 alarm when there is
    /// none, otherwise moves the first alarm 5 minutes later (within its hour).
    public func nudgeFirstAlarmOnWatch() async {
        await editAlarmsOnWatch { alarms in
            if alarms.isEmpty {
                alarms = [Alarm(slot: 0, label: "Set on the watch", hour: 7, minute: 0)]
            } else {
                alarms[0].setTime(hour: Int(alarms[0].hour), minute: (Int(alarms[0].minute) + 5) % 60)
            }
        }
    }

    /// The wearer's stage changed: the watch follows it for smart wake, and reports it to a
    /// subscribed central.
    public func reportLiveStage(_ event: LiveStageEvent) async {
        await setWearerStage(event.stage, at: Date(timeIntervalSince1970: TimeInterval(event.time)))
        guard link?.liveSubscribed == true else { return }
        await sendEvent(.liveStage(event))
    }

    public func replaceRecords(_ records: [SleepItem]) {
        state.records = records.sorted { ($0.start, $0.stage) < ($1.start, $1.stage) }
    }

    // MARK: Frames

    private func handle(_ frame: Frame) async {
        let message: Message
        do {
            message = try Message(frame: frame)
        } catch {
            await reply(to: frame, .error(ErrorReport(status: error.status, command: frame.command.rawValue, sequence: frame.sequence, message: error.message)))
            return
        }
        switch message.form {
        case .request where message.command != .sleepPageAck:
            await handleRequest(message, frame: frame)
        case .eventAck:
            if frame.command == .alarmsChanged { noteAlarmsChangedAcknowledged(sequence: frame.sequence) }
            if let pending = link?.pendingEvent, pending.frame.sequence == frame.sequence, pending.frame.command == frame.command {
                link?.pendingEvent = nil
            }
        case .nack:
            await handleNack(message)
        default:
            if case let .sleepPageAck(ack) = message { await handlePageAck(ack, frame: frame) }
        }
    }

    private func handleRequest(_ message: Message, frame: Frame) async {
        if let last = link?.lastRequest, last.sequence == frame.sequence, last.command == frame.command {
            statistics.duplicateRequests += 1
            await transmit(last.response)
            return
        }
        afterResponse = []
        let response = respond(to: message, frame: frame)
        guard let bytes = try? response.frame(sequence: frame.sequence).encoded() else { return }
        link?.lastRequest = (frame.sequence, frame.command, bytes)
        await transmit(bytes)
        if configuration.answersTwice {
            statistics.responsesRepeated += 1
            await transmit(bytes)
        }
        if case .sleepQueryResponse = response { await pumpPages() }
        let changes = afterResponse
        afterResponse = []
        await apply(changes)
    }

    private func respond(to message: Message, frame: Frame) -> Message {
        func failure(_ status: StatusCode, _ text: String) -> Message {
            .error(ErrorReport(status: status, command: frame.command.rawValue, sequence: frame.sequence, message: text))
        }
        if case let .helloRequest(hello) = message {
            guard hello.minVersion <= Frame.version, hello.maxVersion >= Frame.version else {
                return failure(.unsupportedVersion, "this watch speaks version \(Frame.version) only")
            }
            link?.greeted = true
            if let mtu = try? ATTMTU(min(Int(hello.attMTU), link?.mtu.value ?? Int(hello.attMTU))) { link?.mtu = mtu }
            return .helloResponse(HelloResponse(maxPayload: UInt16(Frame.maxPayload), maxWindow: configuration.maxWindow,
                                                commands: configuration.commands.map(\.rawValue)))
        }
        guard link?.greeted == true else { return failure(.helloRequired, "send HELLO first") }
        if transfer != nil {
            switch message {
            case .sleepAbortRequest, .batteryRequest: break
            default: return failure(.busy, "a sleep transfer is running")
            }
        }
        let caps = configuration.capabilities
        switch message {
        case .deviceInfoRequest:
            return .deviceInfoResponse(DeviceInfoPayload(model: configuration.model, firmware: configuration.firmware, capabilities: caps))
        case let .timeSetRequest(time):
            timeSets += 1
            state.utcOffset = time.utcOffset
            state.zone = time.zone
            return .timeSetResponse
        case .batteryRequest:
            return .batteryResponse(configuration.battery)
        case .alarmsGetRequest:
            return .alarmsGetResponse(AlarmTable(alarms: alarmsAsSent))
        case let .alarmsSetRequest(table):
            if link?.extensions.contains(.smartWindows) != true, let smart = table.alarms.first(where: { $0.smartWindow > 0 }) {
                return failure(.invalidValue, "alarm \(smart.slot) flags: bit 2 (SMART) is reserved unless smart windows are enabled with EXTENSIONS")
            }
            if let problem = table.alarms.problems(limits: caps.alarmLimits).first {
                return failure(.limitExceeded, problem.description)
            }
            state.alarms = table.alarms.sorted { $0.slot < $1.slot }
            return .alarmsSetResponse
        case let .monitorGetRequest(request):
            guard caps.monitorTypes.contains(request.type) else { return failure(.notSupported, "this watch has no \(request.type.name) monitor") }
            return .monitorGetResponse(state.monitors.first { $0.type == request.type } ?? .factoryDefault(request.type))
        case let .monitorSetRequest(config):
            guard caps.monitorTypes.contains(config.type) else { return failure(.notSupported, "this watch has no \(config.type.name) monitor") }
            state.monitors.removeAll { $0.type == config.type }
            state.monitors.append(config)
            state.monitors.sort { $0.type < $1.type }
            return .monitorSetResponse
        case let .sleepQueryRequest(query):
            return startTransfer(query)
        case let .sleepCommitRequest(commit):
            let range = Int64(commit.start)..<Int64(commit.end)
            let stored = state.records.filter { range.contains($0.start) }.count
            guard stored == Int(commit.count) else {
                return failure(.countMismatch, "the watch holds \(stored) records in that range, the central committed \(commit.count); nothing deleted")
            }
            let accepted = AcceptedSleepCommit(start: range.lowerBound, end: range.upperBound, records: state.records.filter { range.contains($0.start) })
            for observer in commitObservers { observer(accepted) }
            acknowledgements.append(SleepAcknowledgement(start: range.lowerBound, end: range.upperBound, count: stored, at: Date()))
            guard caps.deletesSyncedRecords else { return .sleepCommitResponse(SleepCommitResult(deleted: 0)) }
            state.records.removeAll { range.contains($0.start) }
            return .sleepCommitResponse(SleepCommitResult(deleted: UInt32(stored)))
        case let .sleepAbortRequest(abort):
            if transfer?.id == abort.transferId { transfer = nil }
            return .sleepAbortResponse
        case let .liveSubscribeRequest(subscribe):
            guard caps.supportsLiveSleep else { return failure(.notSupported, "this watch has no live sleep events") }
            link?.liveSubscribed = subscribe.enable
            return .liveSubscribeResponse
        case let .extensionsRequest(request) where configuration.speaksVersion1_1:
            let enabled = request.wanted.intersection(configuration.extensionFeatures)
            link?.extensions = enabled
            let window = enabled.contains(.smartWindows) ? UInt8(clamping: caps.maxSmartWindow) : 0
            return .extensionsResponse(ExtensionsResponse(enabled: enabled, maxSmartWindow: window))
        case let .ringRequest(request) where configuration.commands.contains(.ring):
            switch alarmClock.ring(slot: request.slot, reason: request.reason, alarms: state.alarms, calendar: watchCalendar, fallback: Date()) {
            case let .success((result, changes)):
                afterResponse = changes
                return .ringResponse(RingResponse(result: result))
            case let .failure(refusal):
                return failure(.invalidValue, refusal.message)
            }
        default:
            return failure(.unknownCommand, "command \(frame.command) is not a request this watch answers")
        }
    }

    private func handleNack(_ message: Message) async {
        guard case let .nack(report) = message, report.status == .crcMismatch else { return }
        if let last = link?.lastRequest, last.sequence == report.sequence {
            await transmit(last.response)
        } else if let pending = link?.pendingEvent {
            await transmit((try? pending.frame.encoded()) ?? [])
        }
    }

    private func sendNack(for corrupt: FrameReassembler.CorruptFrame) async {
        let report = ErrorReport(status: .crcMismatch, command: corrupt.header.command.rawValue, sequence: corrupt.header.sequence,
                                 message: "frame arrived with a bad CRC")
        await sendOwn(.nack(report))
    }

    func reply(to frame: Frame, _ message: Message) async {
        guard let bytes = try? message.frame(sequence: frame.sequence).encoded() else { return }
        await transmit(bytes)
    }

    /// Sends a frame that takes the watch's own next sequence number.
    @discardableResult
    func sendOwn(_ message: Message) async -> Frame? {
        guard var current = link, let frame = try? message.frame(sequence: current.sequence), let bytes = try? frame.encoded() else { return nil }
        current.sequence &+= 1
        link?.sequence = current.sequence
        await transmit(bytes)
        return frame
    }

    func transmit(_ bytes: [UInt8]) async {
        guard let current = link else { return }
        for chunk in Fragmenter.chunks(of: bytes, mtu: current.mtu) {
            await current.send(chunk)
        }
    }

    func now() -> Duration { clock.now - epoch }
}

/// A sleep range a central acknowledged to the simulated watch (SLEEP_COMMIT), and when.
public struct SleepAcknowledgement: Sendable, Hashable, Codable {
    public var start: Int64
    public var end: Int64
    public var count: Int
    public var at: Date
}
