import Foundation
import TSDevice
import TSGATT
import TSHuami
import TSModels
import TSTransport

/// The band refused the encrypted challenge: the auth key is not the band's (any more).
public struct HuamiAuthKeyRefused: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public init() {}
    public var description: String { "the band refused the auth key; get the current key again (it changes when the band is paired with its app)" }
    public var category: ErrorCategory { .permission }
}

/// No auth key was given for a band, which takes one on every connect.
public struct HuamiAuthKeyMissing: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public init() {}
    public var description: String {
        "a Huami band takes its 16-byte auth key on every connect; give it with `pair ADDRESS --dialect huami --auth-key HEX` "
            + "or `auth-key:` in serve's configuration"
    }

    public var category: ErrorCategory { .notPaired }
}

/// Huami bands behind the seam (protocol-spec/huami/huami.md): the auth exchange with the band's key on
/// every connect, then one request at a time over the band's characteristics: alarms on the
/// configuration characteristic (the profile's pair), the clock, battery, heart-rate control and
/// the activity fetch addressed by service and UUID. Answers are matched by the characteristic
/// they come on; one exchange waits at a time. An exchange takes its answer whether it comes
/// before its write's response or after it, at once or late (up to `singleAttemptTimeout`, since
/// a band's request is never sent again); an answer to another step is passed over.
public actor HuamiWatch: LinkedCentral {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    public private(set) var info: DeviceInfo?
    public package(set) var connectTimings = ConnectTimings()
    package var connection: (any TransportConnection)?
    package var connectionGeneration = 0
    package var requestTurns = RequestTurns()
    /// The model the band's advertised name says; nil: a name no model has (the Mi Band 4's rules are used).
    public private(set) var model: HuamiModel?
    /// The size of the band's per-minute samples, from its model and firmware.
    public private(set) var sampleFormat: HuamiSampleFormat = .fourByte
    /// Notifications no exchange waited for, or that could not be read, since this actor was made.
    public private(set) var droppedNotifications = 0
    /// Data packets that arrived ahead of their turn and were put back in order.
    public private(set) var reorderedPackets = 0

    let fanOut = EventFanOut<WatchEvent>(buffer: 64)
    /// The waiting exchange: what it waits for (`-v` names it) and where its deliveries go.
    private var sink: (token: Int, what: String, continuation: AsyncStream<Delivery>.Continuation)?
    private var sinkTokens = 0
    /// The exchange whose first data packet `-v` named.
    private var dataTracedFor: Int?
    private var timerTokens = 0
    var heartRateStreams: [UUID: HeartRateSubscriber] = [:]
    /// What `monitor set` wrote on this central: a band does not report its settings back.
    var writtenMonitors: [MonitorType: MonitorConfig] = [:]
    /// The samples fetched on the current link and not yet acknowledged (`HuamiWatch+Activity`).
    var fetched: FetchedActivity?

    /// What reaches the exchange that waits.
    enum Delivery: Sendable {
        case notification(Channel, [UInt8])
        case timedOut(Int)
        case linkLost(String)
    }

    /// The characteristics whose notifications the central reads.
    enum Channel: String, Sendable, Hashable {
        case configuration, auth, fetchControl = "fetch control", activityData = "activity data"
    }

    struct HeartRateSubscriber {
        var continuation: AsyncStream<HeartRateMeasurement>.Continuation
        var malformed: (@Sendable (StandardValueError) -> Void)?
    }

    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration()) {
        self.transport = transport
        self.configuration = configuration
    }

    public nonisolated var dialect: Dialect { .huami }
    public nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }
    public var isConnected: Bool { connection != nil }
    public var linkMTU: Int? { connection?.mtu.value }

    /// Heart rate measured during sleep, and the all-day interval.
    public static let monitorTypes: [MonitorType] = [.heartRate, .sleep]

    public var capabilities: WatchCapabilities { info?.capabilities ?? .nothing }

    static let described = WatchCapabilities(
        alarms: .init(maxCount: HuamiAlarm.slots, labelMaxBytes: 0, remarkMaxBytes: 0, snooze: true, maxSmartWindow: 0),
        monitorTypes: monitorTypes,
        // The band may drop what it sent once acknowledged (protocol-spec/huami/huami.md §12.1): the acknowledgement waits for the commit.
        sleepSync: .init(selection: .range, paged: false, deletesSynced: true, acknowledges: true),
        battery: true, clock: true, heartRate: true, heartRateHistory: true)

    // MARK: Connecting

    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        guard let secret = configuration.pairingSecret else { throw HuamiAuthKeyMissing() }
        let key: HuamiAuthKey
        do { key = try HuamiAuthKey(hex: secret.text) } catch { throw PairingSecretError(key: secret.key, problem: error.message) }
        let (opened, generation, _) = try await openLink()
        return try await describing {
            for (channel, characteristic) in [(Channel.auth, HuamiCharacteristic.auth), (.fetchControl, HuamiCharacteristic.fetchControl),
                                              (.activityData, HuamiCharacteristic.activityData)] {
                let values = try await opened.notifications(of: characteristic)
                Task { [weak self] in
                    for await value in values { await self?.deliver(channel, value, generation: generation) }
                }
            }
            let name = await opened.peripheralName()
            model = name.flatMap(HuamiModel.init(advertisedName:))
            try await authenticate(key: key, flags: (model ?? .miBand4).authFlags)
            let firmware = try await firmwareRevision(opened)
            sampleFormat = (model ?? .miBand4).sampleFormat(firmware: firmware)
            let described = DeviceInfo(model: name ?? "Huami band", firmware: firmware ?? "unknown", capabilities: Self.described,
                                       // The transport counts the profile's own service as `.protocolV1`; the band's is not v1's.
                                       services: ServiceSet(opened.services.sorted.filter { $0 != .protocolV1 }),
                                       standard: StandardDeviceInformation(firmwareRevision: firmware), dialect: .huami)
            info = described
            if configuration.syncTimeOnConnect { try await syncTime() }
            return described
        }
    }

    /// Device Information's firmware revision (`2A26`), when the band offers it.
    private func firmwareRevision(_ link: any TransportConnection) async throws -> String? {
        let id = GATTCharacteristicID(service: WatchService.deviceInformation.uuid, uuid: StandardCharacteristic.firmwareRevision.uuid)
        if link.characteristics.contains(id) { return Self.text(try await link.read(id)) }
        if link.standardCharacteristics.contains(.firmwareRevision) { return Self.text(try await link.read(.firmwareRevision)) }
        return nil
    }

    private static func text(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces.union(.controlCharacters))
        return text.isEmpty ? nil : text
    }

    /// The challenge and its answer (protocol-spec/huami/huami.md §2). The key itself is never sent:
    /// it comes from the vendor's cloud, where the band's app stored it.
    private func authenticate(key: HuamiAuthKey, flags: HuamiAuthFlags) async throws {
        let challenge = try await exchange(write: (HuamiCharacteristic.auth, HuamiAuthRequest.requestRandom(flags).bytes), what: "the auth challenge") { channel, bytes -> [UInt8]? in
            guard let answer = try Self.authAnswer(channel, bytes, step: HuamiAuthRequest.requestRandomOpcode) else { return nil }
            if let error = answer.error { throw error }
            guard case let .random(random) = answer else { throw HuamiError(.invalidValue, "the band answered the random-number request with \(answer)") }
            return random
        }
        let request = try key.answer(challenge: challenge, flags: flags)
        try await exchange(write: (HuamiCharacteristic.auth, request.bytes), what: "the auth answer") { channel, bytes -> Void? in
            guard let answer = try Self.authAnswer(channel, bytes, step: HuamiAuthRequest.sendEncryptedOpcode) else { return nil }
            if case .accepted = answer { return () }
            if answer.error?.code == .authKeyRefused { throw HuamiAuthKeyRefused() }
            if let error = answer.error { throw error }
            throw HuamiError(.invalidValue, "the band answered the encrypted number with \(answer)")
        }
    }

    /// An auth notification that answers `step`; nil for another characteristic's, or for one that
    /// answers another step (a second copy of an earlier answer: not this request's).
    private static func authAnswer(_ channel: Channel, _ bytes: [UInt8], step: UInt8) throws -> HuamiAuthAnswer? {
        guard channel == .auth else { return nil }
        let answer = try HuamiAuthAnswer(bytes: bytes)
        return answer.opcode == step ? answer : nil
    }

    public func disconnect() async { await closeLink() }

    package func releaseLink(reason: String) {
        sink?.continuation.yield(.linkLost(reason))
        fetched = nil
        heartRateStreams.values.forEach { $0.continuation.finish() }
        heartRateStreams = [:]
        fanOut.send(.linkLost(reason: reason))
    }

    // MARK: Exchanges

    /// Writes `write` (to the configuration pair when its characteristic is nil) and hands each
    /// notification to `collect` until it returns a result; one exchange at a time. It waits from
    /// before the write, so an answer that comes before the write's response is its own too. No
    /// notification for `timeout` (`singleAttemptTimeout` by default) after the write fails it.
    func exchange<Result: Sendable>(write: (GATTCharacteristicID?, [UInt8]), what: String, timeout: Duration? = nil,
                                    collect: (Channel, [UInt8]) throws -> Result?) async throws -> Result {
        await takeTurn()
        defer { endTurn() }
        let (deliveries, token) = try beginExchange(what)
        defer { endExchange(token) }
        try await send(write)
        var iterator = deliveries.makeAsyncIterator()
        while true {
            let (channel, bytes) = try await next(&iterator, timeout: timeout ?? configuration.singleAttemptTimeout, what: what)
            if let result = try collect(channel, bytes) { return result }
            trace("\(channel.rawValue) notification \(Self.hex(bytes)) is no answer to \(what): passed over")
        }
    }

    /// From now until `endExchange`, notifications go to the exchange waiting for `what`.
    func beginExchange(_ what: String) throws -> (AsyncStream<Delivery>, Int) {
        guard connection != nil else { throw WatchError.notConnected }
        let (deliveries, continuation) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .unbounded)
        sinkTokens += 1
        sink = (sinkTokens, what, continuation)
        return (deliveries, sinkTokens)
    }

    func endExchange(_ token: Int) {
        guard let current = sink, current.token == token else { return }
        current.continuation.finish()
        sink = nil
    }

    /// One write, to a characteristic or (nil) the configuration pair; a lost link is `disconnected`.
    func send(_ write: (GATTCharacteristicID?, [UInt8])) async throws {
        guard let link = connection else { throw WatchError.notConnected }
        trace("writing \(Self.hex(write.1)) to \(write.0.map(Self.name) ?? Channel.configuration.rawValue)\(sink.map { " for \($0.what)" } ?? "")")
        do {
            if let characteristic = write.0 {
                try await link.write(write.1, to: characteristic, withResponse: true)
            } else {
                try await link.write(write.1)
            }
        } catch let error as TransportError {
            throw error.category == .unavailable ? WatchError.disconnected(error.description) : error
        }
    }

    /// The next notification of the exchange; `timeout` when none comes within `timeout`.
    func next(_ iterator: inout AsyncStream<Delivery>.AsyncIterator, timeout: Duration, what: String) async throws -> (Channel, [UInt8]) {
        timerTokens += 1
        let token = timerTokens
        let continuation = sink?.continuation
        let timer = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { continuation?.yield(.timedOut(token)) }
        }
        defer { timer.cancel() }
        while let delivery = await iterator.next(isolation: #isolation) {
            switch delivery {
            case let .notification(channel, bytes): return (channel, bytes)
            case let .timedOut(fired) where fired == token: throw WatchError.timeout(command: what, attempts: 1)
            case .timedOut: continue
            case let .linkLost(reason): throw WatchError.disconnected(reason)
            }
        }
        throw WatchError.disconnected("the link ended while waiting for \(what)")
    }

    // MARK: Receiving

    /// The configuration pair's notifications.
    package func received(_ bytes: [UInt8]) async { route(.configuration, bytes) }

    private func deliver(_ channel: Channel, _ bytes: [UInt8], generation: Int) {
        guard generation == connectionGeneration else { return }
        route(channel, bytes)
    }

    private func route(_ channel: Channel, _ bytes: [UInt8]) {
        guard let sink else {
            droppedNotifications += 1
            trace("\(channel.rawValue) notification \(Self.hex(bytes)) arrived with no exchange waiting: dropped")
            return
        }
        // A transfer's data packets come by the hundred: `-v` names the first of each exchange only.
        if channel != .activityData || dataTracedFor != sink.token {
            if channel == .activityData { dataTracedFor = sink.token }
            trace("\(channel.rawValue) notification \(Self.hex(bytes)) → \(sink.what)\(channel == .activityData ? " (and the data packets after it)" : "")")
        }
        sink.continuation.yield(.notification(channel, bytes))
    }

    func countReordered(_ count: Int) { reorderedPackets += count }

    // MARK: Traffic (`-v`)

    func trace(_ line: @autoclosure () -> String) {
        configuration.traffic?(line())
    }

    /// `10 82 01 3f…` (the first bytes, then the length when longer).
    static func hex(_ bytes: [UInt8]) -> String {
        let shown = bytes.prefix(6).map { String(format: "%02x", $0) }.joined(separator: " ")
        return bytes.count > 6 ? "\(shown) … (\(bytes.count) bytes)" : shown
    }

    /// `auth (…0009)`: a characteristic as `-v` names it.
    static func name(_ characteristic: GATTCharacteristicID) -> String {
        let named: [GATTCharacteristicID: String] = [
            HuamiCharacteristic.auth: "auth", HuamiCharacteristic.fetchControl: "fetch control", HuamiCharacteristic.activityData: "activity data",
            HuamiCharacteristic.currentTime: "current time", HuamiCharacteristic.heartRateControlPoint: "heart-rate control point",
            HuamiCharacteristic.battery: "battery",
        ]
        return "\(named[characteristic] ?? "characteristic") (\(characteristic.uuid.prefix(8)))"
    }
}
