import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// One watch: the central side of protocol v1 and v1.1 over any transport (the `.protocolV1`
/// dialect). Requests go out one at a time, are retransmitted on timeout or NACK and matched to
/// their response by sequence number; events are acknowledged and fanned out to every
/// subscriber; sleep pages are received under a sliding window. A link found without the
/// protocol v1 service is served through its standard services, as `StandardServicesWatch`
/// serves it (a watch whose GATT server restarts, or one opened before its dialect was known).
public actor Watch {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    /// DEVICE_INFO of the current or last connection.
    public private(set) var info: DeviceInfo?
    /// Commands the watch listed in HELLO.
    public private(set) var supportedCommands: Set<CommandID> = []
    /// The version-1.1 features the watch enabled on the current or last connection (EXTENSIONS);
    /// none for a version-1 watch, or when `askedExtensions` is empty.
    public private(set) var extensions = ExtensionsResponse(enabled: [], maxSmartWindow: 0)
    /// Events the watch sent that this connection's negotiation does not allow (a smart window
    /// or an alarm alert without the feature enabled): acknowledged, counted, not delivered.
    public internal(set) var rejectedEvents = 0
    /// The services of the current or last connection; nil before the first.
    public internal(set) var services: ServiceSet?
    /// Heart Rate Measurement values refused as malformed since this actor was made.
    public internal(set) var malformedHeartRateValues = 0

    package var connection: (any TransportConnection)?
    var reassembler = FrameReassembler()
    var sequence: UInt8 = 0
    var pending: PendingRequest?
    var requestLineBusy = false
    var requestLineWaiters: [CheckedContinuation<Void, Never>] = []
    var lastEvent: (sequence: UInt8, command: CommandID)?
    let alarmEvents = EventFanOut<AlarmsChanged>(buffer: 64)
    let liveEvents = EventFanOut<LiveStageEvent>(buffer: 256)
    let alertEvents = EventFanOut<AlarmAlert>(buffer: 64)
    let linkLossEvents = EventFanOut<String>(buffer: 8)
    /// The same events in TSModels types, for the dialect seam (`WatchCentral.events`).
    package let watchEvents = EventFanOut<WatchEvent>(buffer: 256)
    var receiver: SleepReceiver?
    /// The last finished transfer, to re-acknowledge its pages if the watch missed the final ack.
    var completedTransfer: (id: UInt16, pageCount: Int)?
    var pumpTask: Task<Void, Never>?
    package var connectionGeneration = 0
    package var requestTurns = RequestTurns()
    let clock = ContinuousClock()
    let epoch = ContinuousClock.now

    struct PendingRequest {
        var sequence: UInt8
        var command: CommandID
        var bytes: [UInt8]
        var attempts: Int
        var continuation: CheckedContinuation<Message, any Error>
    }

    /// The protocol v1.1 features asked for in EXTENSIONS when the watch offers it; empty: behave
    /// as a version-1 central (send no EXTENSIONS).
    public let askedExtensions: ExtensionFeatures

    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration(), extensions: ExtensionFeatures = .version1_1) {
        self.transport = transport
        self.configuration = configuration
        self.askedExtensions = extensions
    }

    public var isConnected: Bool { connection != nil }
    public var mtu: ATTMTU? { connection?.mtu }
    /// How long the last connect took: until the transport was open, and until the watch's
    /// first byte arrived.
    public package(set) var connectTimings = ConnectTimings()

    // MARK: Connection

    /// Opens the link, negotiates (HELLO), reads DEVICE_INFO and, by default, sets the watch's
    /// clock. Does nothing when already connected.
    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        reassembler = FrameReassembler()
        sequence = 0
        lastEvent = nil
        extensions = ExtensionsResponse(enabled: [], maxSmartWindow: 0)
        let (opened, _, pump) = try await openLink()
        pumpTask = pump
        services = opened.services
        return try await describing {
            guard opened.services.contains(.protocolV1) else {
                let deviceInfo = try await standardDeviceInfo(opened)
                info = deviceInfo
                // Setting the clock on connect is a courtesy here; a watch whose Current Time is
                // read-only keeps its own.
                if configuration.syncTimeOnConnect && opened.standardCharacteristics.contains(.currentTime) { try? await syncTime() }
                return deviceInfo
            }
            let hello = try await request(.helloRequest(HelloRequest(attMTU: UInt16(opened.mtu.value))))
            guard case let .helloResponse(answer) = hello, answer.version == Frame.version else {
                throw WatchError.protocolViolation("HELLO answered with \(hello.kind)")
            }
            supportedCommands = Set(answer.commands.map(CommandID.init(rawValue:)))
            extensions = try await negotiateExtensions()
            guard case let .deviceInfoResponse(reported) = try await request(.deviceInfoRequest) else {
                throw WatchError.protocolViolation("DEVICE_INFO answered with another message")
            }
            var described = DeviceInfo(model: reported.model, firmware: reported.firmware,
                                       capabilities: capabilities(reported.capabilities, services: opened.services),
                                       services: opened.services, dialect: .protocolV1)
            if opened.services.contains(.deviceInformation) { described.standard = try await readDeviceInformation(opened) }
            info = described
            if configuration.syncTimeOnConnect { try await syncTime() }
            return described
        }
    }

    public func disconnect() async { await closeLink() }

    /// DEVICE_INFO's capabilities, with what HELLO and EXTENSIONS said on this link (v1.1: the
    /// smart window, RING, alarm alerts) and the standard services beside v1's.
    func capabilities(_ reported: DeviceInfoCapabilities, services: ServiceSet) -> WatchCapabilities {
        let alarms = reported.maxAlarms > 0
            ? WatchCapabilities.Alarms(maxCount: reported.maxAlarms, labelMaxBytes: reported.labelMaxBytes, remarkMaxBytes: reported.remarkMaxBytes,
                                       snooze: true, maxSmartWindow: Int(extensions.maxSmartWindow))
            : nil
        return WatchCapabilities(
            alarms: alarms, monitorTypes: reported.monitorTypes,
            sleepSync: .init(selection: .range, paged: true, deletesSynced: reported.deletesSyncedRecords, acknowledges: true),
            statisticsRule: reported.statisticsRule, naps: reported.supportsNaps, liveStages: reported.supportsLiveSleep,
            ring: supportedCommands.contains(.ring), alarmAlerts: extensions.enabled.contains(.alarmAlerts),
            battery: true, batteryNotifications: services.contains(.battery), clock: true, heartRate: services.contains(.heartRate))
    }

    package func releaseLink(reason: String) {
        pumpTask = nil
        if let waiting = pending {
            pending = nil
            waiting.continuation.resume(throwing: WatchError.disconnected(reason))
        }
        receiver?.fail(WatchError.disconnected(reason))
        receiver = nil
        linkLossEvents.send(reason)
        watchEvents.send(.linkLost(reason: reason))
    }

    /// The reason each time an open link ends, whoever ended it.
    public func linkLosses() -> AsyncStream<String> { linkLossEvents.subscribe() }

    // MARK: API

    /// Sets the watch's clock to `configuration.now()` in `configuration.timeZone`.
    public func syncTime() async throws {
        guard hasProtocolV1 else { return try await writeStandardTime() }
        let now = configuration.now()
        let zone = configuration.timeZone
        let utc = UInt32(clamping: Int64(now.timeIntervalSince1970))
        let message = Message.timeSetRequest(TimeSet(utc: utc, utcOffset: Int32(zone.secondsFromGMT(for: now)),
                                                     zone: zone.identifier.utf8.count <= 64 ? zone.identifier : nil))
        try await expect(message) { if case .timeSetResponse = $0 { () } else { nil } }
    }

    public func battery() async throws -> BatteryStatus {
        guard hasProtocolV1 else { return BatteryStatus(level: try await standardBatteryLevel(), state: .unknown) }
        return try await expect(.batteryRequest) { if case let .batteryResponse(status) = $0 { status } else { nil } }
    }

    public func alarms() async throws -> [Alarm] {
        let alarms = try await expect(.alarmsGetRequest) { if case let .alarmsGetResponse(table) = $0 { table.alarms } else { nil } }
        if let smuggled = smartWindowOutsideNegotiation(alarms) {
            throw WatchError.protocolViolation("ALARMS_GET response: the alarm in slot \(smuggled.slot) carries a smart window, but smart windows are not enabled on this connection")
        }
        return alarms
    }

    /// Replaces the whole alarm table. Checked against the watch's limits before anything is
    /// sent; the error names each offending alarm. A smart window on a watch without smart wake
    /// is `.unsupported`; one longer than the watch takes is an invalid alarm.
    public func setAlarms(_ alarms: [Alarm]) async throws {
        let capabilities = try currentInfo().capabilities
        if capabilities.maxSmartWindow == 0, let asking = alarms.first(where: { $0.smartWindow > 0 }) {
            throw WatchError.unsupported("smart wake windows (the alarm in slot \(asking.slot) asks for \(asking.smartWindow) minutes; "
                                         + "this watch's smart-window limit is 0: it lacks protocol v1.1's smart windows)")
        }
        let problems = alarms.problems(limits: capabilities.alarmLimits)
        guard problems.isEmpty else { throw WatchError.invalidAlarms(problems) }
        try await expect(.alarmsSetRequest(AlarmTable(alarms: alarms))) { if case .alarmsSetResponse = $0 { () } else { nil } }
    }

    /// Makes the watch ring now for the alarm in `slot` (protocol v1.1 RING): `.smartWake` stands
    /// for the alarm's next occurrence, `.test` changes nothing. A watch without RING is
    /// `.unsupported` before anything is sent.
    public func ring(slot: UInt8, reason: RingReason) async throws -> RingResult {
        _ = try currentInfo()
        guard supportedCommands.contains(.ring) else {
            throw WatchError.unsupported("ringing on command (protocol v1.1 RING)")
        }
        return try await expect(.ringRequest(RingRequest(slot: slot, reason: reason))) {
            if case let .ringResponse(answer) = $0 { answer.result } else { nil }
        }
    }

    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        try checkMonitorSupport(type)
        return try await expect(.monitorGetRequest(MonitorRequest(type: type))) {
            if case let .monitorGetResponse(config) = $0, config.type == type { config } else { nil }
        }
    }

    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        try checkMonitorSupport(config.type)
        if let problem = config.problem { throw WatchError.invalidMonitorConfig(config.type, problem) }
        try await expect(.monitorSetRequest(config)) { if case .monitorSetResponse = $0 { () } else { nil } }
    }

    /// Tells the watch that `count` records with start in [start, end) are durably stored; a
    /// watch that deletes synced data deletes them. Returns how many it deleted.
    public func commitSleep(start: UInt32, end: UInt32, count: Int) async throws -> Int {
        let commit = SleepCommit(start: start, end: end, count: UInt32(clamping: count))
        return try await expect(.sleepCommitRequest(commit)) {
            if case let .sleepCommitResponse(result) = $0 { Int(result.deleted) } else { nil }
        }
    }

    public func setLiveSleepEvents(_ enabled: Bool) async throws {
        guard try currentInfo().capabilities.liveStages else { throw WatchError.unsupported("live sleep events") }
        try await expect(.liveSubscribeRequest(LiveSubscribe(enable: enabled))) { if case .liveSubscribeResponse = $0 { () } else { nil } }
    }

    /// Every ALARMS_CHANGED the watch sends, for as long as the stream is iterated. Any number
    /// of subscribers may listen at once.
    public func alarmChanges() -> AsyncStream<AlarmsChanged> { alarmEvents.subscribe() }

    public func liveStages() -> AsyncStream<LiveStageEvent> { liveEvents.subscribe() }

    /// Every ALARM_ALERT the watch sends (an alarm ringing, dismissed, snoozed, timed out), for
    /// as long as the stream is iterated; nothing on a watch that does not report them
    /// (`capabilities.reportsAlarmAlerts`).
    public func alarmAlerts() -> AsyncStream<AlarmAlert> { alertEvents.subscribe() }

    /// EXTENSIONS right after HELLO when the watch listed it (wire-protocol.md §9.2).
    private func negotiateExtensions() async throws -> ExtensionsResponse {
        let wanted = askedExtensions
        guard supportedCommands.contains(.extensions), !wanted.isEmpty else { return ExtensionsResponse(enabled: [], maxSmartWindow: 0) }
        let answer: ExtensionsResponse
        do {
            answer = try await expect(.extensionsRequest(ExtensionsRequest(wanted: wanted))) {
                if case let .extensionsResponse(answer) = $0 { answer } else { nil }
            }
        } catch WatchError.rejected {
            // It listed EXTENSIONS but refuses it: talk version 1 rather than not at all.
            return ExtensionsResponse(enabled: [], maxSmartWindow: 0)
        }
        guard answer.enabled.isSubset(of: wanted) else {
            throw WatchError.protocolViolation("EXTENSIONS enabled \(answer.enabled.subtracting(wanted).names.joined(separator: ", ")), which this gateway did not ask for")
        }
        return answer
    }

    /// The first alarm with a smart window when smart windows are not enabled on this connection.
    func smartWindowOutsideNegotiation(_ alarms: [Alarm]) -> Alarm? {
        extensions.enabled.contains(.smartWindows) ? nil : alarms.first { $0.smartWindow > 0 }
    }

    func currentInfo() throws -> DeviceInfo {
        guard let info, connection != nil else { throw WatchError.notConnected }
        return info
    }

    private func checkMonitorSupport(_ type: MonitorType) throws {
        if connection != nil, !hasProtocolV1 { throw WatchError.unsupported(StandardServicesWatch.protocolV1Features("monitor settings")) }
        guard try currentInfo().capabilities.monitorTypes.contains(type) else {
            throw WatchError.unsupported("the \(type.name) monitor")
        }
    }

    /// Sends `message` and maps the expected answer with `extract` (nil = unexpected answer).
    func expect<T>(_ message: Message, _ extract: (Message) -> T?) async throws -> T {
        let answer = try await request(message)
        guard let value = extract(answer) else {
            throw WatchError.protocolViolation("\(message.kind) was answered with \(answer.kind)")
        }
        return value
    }
}
