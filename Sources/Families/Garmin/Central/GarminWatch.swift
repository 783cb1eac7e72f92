import Foundation
import TSDevice
import TSGATT
import TSGarmin
import TSModels
import TSTransport

/// What a Garmin central passed over instead of delivering, since it was made.
public struct GarminDropCounts: Sendable, Hashable {
    /// COBS frames that did not decode, or whose GFDI length or CRC was wrong.
    public var frames = 0
    /// Control messages that did not parse, or were for another client.
    public var controls = 0
    /// Bytes on a handle this central did not register.
    public var otherHandles = 0
    /// File chunks no download waited for (answered "abort").
    public var strayChunks = 0

    public init() {}
}

/// Garmin watches behind the seam (protocol-spec/garmin/garmin.md): every packet starts with a
/// multi-link handle; on handle 0 the host closes what a phone left open and registers GFDI,
/// and on the handle the watch gives it, COBS-framed GFDI messages flow. The watch leads the
/// session (§4): its device information, auth negotiation and configuration are answered as
/// they come, and so is every time request it makes (§5); the central's own requests (a
/// download, a file flag, a system event) wait for their answer one at a time.
public actor GarminWatch: LinkedCentral {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    public private(set) var info: DeviceInfo?
    public package(set) var connectTimings = ConnectTimings()
    /// The watch's DEVICE_INFORMATION and CONFIGURATION on the current or last link.
    public private(set) var watchInformation: GarminDeviceInformation?
    public private(set) var watchConfiguration: GarminConfiguration?
    /// Time requests the central answered with its clock, since it was made.
    public private(set) var timeAnswers = 0
    /// The id of the last PROTOBUF request the central sent (§7); each request takes the next.
    var protobufRequestID: UInt16 = 0
    var dropped = GarminDropCounts()

    package var connection: (any TransportConnection)?
    package var connectionGeneration = 0
    package var requestTurns = RequestTurns()
    let fanOut = EventFanOut<WatchEvent>(buffer: 64)

    /// The handle the watch gave GFDI on the current link, and the COBS stream on it.
    var gfdiHandle: UInt8?
    var splitter = COBSFrameSplitter()
    /// The watch's CONFIGURATION came and was answered on the current link (the host's own and
    /// SYNC_READY sent), the watch acknowledged SYNC_READY, and time requests it made: the session
    /// is open once all three are in.
    var handshakeDone = false
    var syncReadyAcknowledged = false
    var timeRequests = 0
    /// Whether a time request is answered with this central's clock: when the configuration sets
    /// the clock at connect, or once `syncTime` asked; else it is refused (NAK), as a clock the
    /// gateway does not trust is not handed on.
    var givesTime = false
    /// A time request the central may not answer yet (its clock not trusted): held until `syncTime`
    /// answers it or the central's next request refuses it (NAK) first, so that what the central
    /// writes still follows only what the watch sent and what the caller asked.
    var heldTimeRequest: GarminCurrentTimeRequest?
    /// When the central last gave the watch its clock on this link.
    var timeGiven: ContinuousClock.Instant?
    /// What waits for the watch: one request at a time.
    var sink: AsyncStream<Delivery>.Continuation?
    /// Files read whole on the last transfer of each FIT subtype, archived once the store holds what they gave.
    var filesRead: [UInt8: [UInt16]] = [:]
    /// Real-time heart rate: the handle the watch gave service 6, and who listens.
    var heartRateHandle: UInt8?
    var heartRateSubscribers: [UUID: HeartRateSubscriber] = [:]

    struct HeartRateSubscriber {
        var continuation: AsyncStream<HeartRateMeasurement>.Continuation
        var malformed: (@Sendable (StandardValueError) -> Void)?
    }

    /// What reaches a waiting request.
    enum Delivery: Sendable {
        case control(MultiLinkControl)
        case frame(GFDIFrame)
        case handshakeDone
        case timedOut(afterDeliveries: Int)
        case linkLost(String)
    }

    /// This host's DEVICE_INFORMATION, in the layout of the watch's (§4).
    static let hostInformation = GarminDeviceInformation(protocolVersion: 150, product: 0xFFFF, unit: 0xFFFF_FFFF, software: 100, maxPacket: 0xFFFF,
                                                         bluetoothName: "tsgateway", deviceName: "tsgateway", model: "tsgateway", trailing: [1])

    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration()) {
        self.transport = transport
        self.configuration = configuration
    }

    public nonisolated var dialect: Dialect { .garmin }
    public nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }
    public var isConnected: Bool { connection != nil }
    public var linkMTU: Int? { connection?.mtu.value }
    public var drops: GarminDropCounts { dropped }
    public var capabilities: WatchCapabilities { info?.capabilities ?? .nothing }

    /// Sleep and heart rate from FIT files, archived after the commit; the clock given when the
    /// watch asks; the battery asked through PROTOBUF (§7); alarms set in a settings file, never
    /// read back (§10).
    static let capabilities = WatchCapabilities(
        alarms: .init(maxCount: GarminAlarmFile.maxAlarms, labelMaxBytes: GarminAlarmFile.labelMaxBytes, snooze: false, readable: false),
        sleepSync: .init(selection: .range, paged: true, deletesSynced: false, acknowledges: true),
        battery: true, clock: true, heartRate: true, heartRateHistory: true)

    // MARK: Connecting

    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        _ = try await openLink()
        gfdiHandle = nil
        heartRateHandle = nil
        splitter.reset()
        handshakeDone = false
        syncReadyAcknowledged = false
        timeRequests = 0
        givesTime = configuration.syncTimeOnConnect
        (heldTimeRequest, timeGiven) = (nil, nil)
        return try await describing {
            // What a phone before left open is closed; then GFDI, whose registration the watch
            // answers with a handle and at once its handshake (§4), which `received` answers in
            // the order it comes, SYNC_READY included.
            _ = try await exchange(control: .closeAllRequest(client: MultiLinkControl.hostClient), what: "CLOSE_ALL") { delivery in
                if case .control(.closeAllResponse) = delivery { return () }
                return nil
            }
            do {
                _ = try await exchange(control: .registerRequest(client: MultiLinkControl.hostClient, service: MultiLinkControl.Service.gfdi, reliable: 0),
                                       what: "the GFDI registration and the watch's handshake") { [self] _ in sessionOpen ? () : nil }
            } catch WatchError.timeout where gfdiHandle != nil && !handshakeDone {
                // A watch that leads no handshake (garmin-ble's simulated watch sends neither
                // DEVICE_INFORMATION nor CONFIGURATION): the session goes on without them.
                handshakeDone = true
                _ = try await exchange(frames: [GFDIFrame(type: GFDIType.systemEvent, payload: GarminSystemEvent(event: GarminSystemEvent.syncReady).payload)],
                                       what: "SYNC_READY") { delivery in Self.isAnswer(delivery, to: GFDIType.systemEvent) ? () : nil }
            } catch WatchError.timeout where handshakeDone && syncReadyAcknowledged && timeRequests == 0 {
                // A watch that does not ask the time by itself is told it changed.
                try await promptTimeRequest()
            }
            let described = describe(services: connection?.services, name: await connection?.peripheralName())
            info = described
            return described
        }
    }

    /// The watch's handshake answered, SYNC_READY acknowledged, and its time request (§4 step 6)
    /// answered or refused. Waiting for the last too leaves no message of the watch's session
    /// start to cross the central's next request: what the central writes follows only what the
    /// watch sent, in its order, so a recorded session replays write for write.
    var sessionOpen: Bool { handshakeDone && syncReadyAcknowledged && timeRequests > 0 }

    /// The watch's DEVICE_INFORMATION; without one, its advertised name.
    private func describe(services: ServiceSet?, name: String?) -> DeviceInfo {
        let watch = watchInformation
        return DeviceInfo(model: watch.map { $0.deviceName.isEmpty ? $0.bluetoothName : "\($0.deviceName) \($0.model)".trimmingCharacters(in: .whitespaces) } ?? name ?? "Garmin watch",
                          firmware: watch?.softwareVersion ?? "unknown", capabilities: Self.capabilities,
                          // The transport counts the dialect's own service as `.protocolV1`; the watch's is not v1's.
                          services: services.map { ServiceSet($0.sorted.filter { $0 != .protocolV1 }) },
                          standard: StandardDeviceInformation(manufacturer: "Garmin", model: watch?.model,
                                                              serialNumber: watch.map { String($0.unit) }, softwareRevision: watch?.softwareVersion),
                          dialect: .garmin)
    }

    public func disconnect() async { await closeLink() }

    package func releaseLink(reason: String) {
        sink?.yield(.linkLost(reason))
        heartRateSubscribers.values.forEach { $0.continuation.finish() }
        heartRateSubscribers = [:]
        heartRateHandle = nil
        gfdiHandle = nil
        handshakeDone = false
        fanOut.send(.linkLost(reason: reason))
    }

    // MARK: Time

    /// Says the time changed (5030 TIME_UPDATED) and answers the watch's request for it (5052)
    /// with this central's clock: no message sets a Garmin watch's clock (§5).
    /// A request the watch made and the central held is answered at once; a clock given on this
    /// link moments ago (at connect) is not given again; else the watch is told the time changed.
    public func syncTime() async throws {
        givesTime = true
        if let held = heldTimeRequest {
            await takeTurn()
            defer { endTurn() }
            heldTimeRequest = nil
            guard let link = connection else { throw WatchError.notConnected }
            try await write(timeAnswer(held).frame, on: link)
            timeAnswers += 1
            timeGiven = .now
            return
        }
        if let timeGiven, ContinuousClock.now - timeGiven < Self.timeStillFresh { return }
        try await promptTimeRequest()
    }

    /// How long a clock given on a link counts as just given (`syncTime` right after connect).
    static let timeStillFresh: Duration = .seconds(30)

    static func isAnswer(_ delivery: Delivery, to type: UInt16) -> Bool {
        guard case let .frame(frame) = delivery, frame.type == GFDIType.response else { return false }
        return (try? GFDIResponse(payload: frame.payload))?.originalType == type
    }

    /// 5030 TIME_UPDATED, then the watch's time request, answered or refused by `received`.
    func promptTimeRequest() async throws {
        let before = timeRequests
        _ = try await exchange(frames: [GFDIFrame(type: GFDIType.systemEvent, payload: GarminSystemEvent(event: GarminSystemEvent.timeUpdated).payload)],
                               what: "the watch's time request after TIME_UPDATED") { [self] _ in timeRequests > before ? () : nil }
    }

    /// The answer to a time request (§5): now in Garmin seconds, the zone's offset with daylight
    /// saving, and its next transitions where the zone has them.
    func timeAnswer(_ request: GarminCurrentTimeRequest) -> GFDIResponse {
        let now = configuration.now()
        let zone = configuration.timeZone
        let garmin = GarminTime.garmin(Int64(now.timeIntervalSince1970)) ?? 0
        var transitions: [UInt32] = []
        var after = now
        for _ in 0..<2 {
            guard let next = zone.nextDaylightSavingTimeTransition(after: after) else { break }
            transitions.append(GarminTime.garmin(Int64(next.timeIntervalSince1970)) ?? 0)
            after = next
        }
        // Which of the two ends daylight saving: the one after which the zone is not in it.
        var end: UInt32 = 0, start: UInt32 = 0
        for transition in transitions {
            let instant = Date(timeIntervalSince1970: TimeInterval(GarminTime.unix(transition)))
            if zone.isDaylightSavingTime(for: instant) { start = transition } else { end = transition }
        }
        return request.answer(now: garmin, utcOffset: Int32(zone.secondsFromGMT(for: now)), nextDSTEnd: end, nextDSTStart: start)
    }

    // MARK: Requests

    /// Sends a control message and hands what comes to `collect` until it returns a result.
    func exchange<Result: Sendable>(control: MultiLinkControl, what: String,
                                    collect: (Delivery) throws -> Result?) async throws -> Result {
        try await exchange(sending: { link in try await link.write(control.bytes) }, what: what, collect: collect)
    }

    /// Sends GFDI frames and hands what comes to `collect` until it returns a result.
    func exchange<Result: Sendable>(frames: [GFDIFrame], what: String,
                                    collect: (Delivery) async throws -> Result?) async throws -> Result {
        try await exchange(sending: { link in for frame in frames { try await self.write(frame, on: link) } }, what: what, collect: collect)
    }

    /// One request in flight: `send` writes it, and each delivery goes to `collect` until it
    /// returns a result. The first delivery is waited for `singleAttemptTimeout`, each next one
    /// `pageIdleTimeout` (a file's chunks come one after another).
    func exchange<Result: Sendable>(sending send: (any TransportConnection) async throws -> Void, what: String,
                                    collect: (Delivery) async throws -> Result?) async throws -> Result {
        await takeTurn()
        defer { endTurn() }
        guard let link = connection else { throw WatchError.notConnected }
        let (deliveries, continuation) = AsyncStream.makeStream(of: Delivery.self)
        sink = continuation
        defer {
            sink = nil
            continuation.finish()
        }
        func startTimer(_ wait: Duration, deliveries: Int) -> Task<Void, Never> {
            Task {
                try? await Task.sleep(for: wait)
                if !Task.isCancelled { continuation.yield(.timedOut(afterDeliveries: deliveries)) }
            }
        }
        var count = 0
        var timer = startTimer(configuration.singleAttemptTimeout, deliveries: count)
        defer { timer.cancel() }
        do {
            if heldTimeRequest != nil {
                // The held time request is refused before anything else is asked.
                heldTimeRequest = nil
                try await write(GFDIResponse(originalType: GFDIType.currentTimeRequest, status: .nak).frame, on: link)
            }
            try await send(link)
        } catch let error as TransportError {
            throw error.category == .unavailable ? WatchError.disconnected(error.description) : error
        }
        for await delivery in deliveries {
            switch delivery {
            case let .timedOut(after):
                guard after == count else { continue }
                throw WatchError.timeout(command: count == 0 ? what : "\(what) (its answers stopped after \(count))", attempts: 1)
            case let .linkLost(reason):
                throw WatchError.disconnected(reason)
            default:
                if let result = try await collect(delivery) { return result }
                count += 1
                timer.cancel()
                timer = startTimer(configuration.pageIdleTimeout, deliveries: count)
            }
        }
        throw WatchError.disconnected("the link ended while waiting for \(what)")
    }

    /// A GFDI frame on the GFDI handle: its delimited COBS form in slices of the link's MTU.
    func write(_ frame: GFDIFrame, on link: any TransportConnection) async throws {
        guard let handle = gfdiHandle else { throw WatchError.protocolViolation("GFDI is not registered on this link") }
        let bytes = try frame.delimited()
        configuration.traffic?("writing GFDI \(frame.type) (\(frame.payload.count) payload bytes)")
        let slice = max(1, link.mtu.chunkSize - 1)
        var start = 0
        while start < bytes.count {
            let end = min(start + slice, bytes.count)
            try await link.write([handle] + bytes[start..<end])
            start = end
        }
    }

    /// A frame sent outside any request (an answer to the watch), on the current link if any.
    func send(_ frame: GFDIFrame) async {
        guard let link = connection else { return }
        do { try await write(frame, on: link) } catch {
            configuration.traffic?("could not answer the watch's \(frame.type): \(error)")
        }
    }

    // MARK: Receiving

    package func received(_ bytes: [UInt8]) async {
        guard let handle = bytes.first else { return }
        if handle == MultiLinkControl.controlHandle {
            // An answer for this host's client, or for none (garmin-ble's simulated watch names 0); another host's is dropped.
            guard let control = try? MultiLinkControl(bytes: bytes), [MultiLinkControl.hostClient, 0].contains(control.client) else {
                dropped.controls += 1
                return
            }
            if case let .registerResponse(_, service, 0, given, _) = control {
                if service == MultiLinkControl.Service.gfdi {
                    gfdiHandle = given
                    splitter.reset()
                } else if service == MultiLinkControl.Service.realtimeHeartRate, !heartRateSubscribers.isEmpty {
                    // Heart rate streams from its registration on: its readings are routed from the answer on, for a listener already there.
                    heartRateHandle = given
                }
            }
            configuration.traffic?("control \(bytes.prefix(2).map { String(format: "%02x", $0) }.joined(separator: " ")) …")
            sink?.yield(.control(control))
            return
        }
        let routed = Self.route(handle, to: [heartRateHandle, gfdiHandle].compactMap { $0 })
        if let heartRateHandle, routed == heartRateHandle {
            heartRateReading([heartRateHandle] + bytes.dropFirst())
            return
        }
        guard let gfdiHandle, routed == gfdiHandle else {
            dropped.otherHandles += 1
            return
        }
        for found in splitter.append(bytes.dropFirst()) {
            let frame: GFDIFrame
            do { frame = try GFDIFrame(bytes: try COBS.decode(try found.get())) } catch {
                dropped.frames += 1
                configuration.traffic?("dropped a GFDI frame: \(error)")
                continue
            }
            await received(frame)
        }
    }

    /// The handle a packet's first byte names (§2.2): a handle given out, as it is (a handle with
    /// bit 7 set may be a plain one); else, for handles 1…7, the one-byte flagged form
    /// `0x80 | handle << 4` in which garmin-ble's simulated watch sends on a handle registered
    /// without MLR. Nil for neither.
    package static func route(_ first: UInt8, to handles: [UInt8]) -> UInt8? {
        if handles.contains(first) { return first }
        let flagged = (first & 0x70) >> 4
        guard first & 0x80 != 0, handles.contains(flagged), (1...7).contains(flagged) else { return nil }
        return flagged
    }

    /// The watch's messages: the handshake and time requests answered here, the rest to the
    /// request that waits; a type nobody takes is answered "unsupported" (§3.2).
    func received(_ frame: GFDIFrame) async {
        configuration.traffic?("GFDI \(frame.type) (\(frame.payload.count) payload bytes)")
        switch frame.type {
        case GFDIType.deviceInformation:
            guard let watch = try? GarminDeviceInformation(payload: frame.payload) else {
                await send(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
                return
            }
            watchInformation = watch
            let host = (try? Self.hostInformation.payload()) ?? []
            await send(GFDIResponse(originalType: frame.type, status: .ack, extra: host).frame)
        case GFDIType.authNegotiation:
            guard let negotiation = try? GarminAuthNegotiation(payload: frame.payload) else {
                await send(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
                return
            }
            await send(negotiation.answer.frame)
        case GFDIType.configuration:
            guard let configuration = try? GarminConfiguration(payload: frame.payload) else {
                await send(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
                return
            }
            watchConfiguration = configuration
            await send(GFDIResponse(originalType: frame.type, status: .ack).frame)
            // The host's own configuration: the watch's echoed, as garmin-bridge does; then SYNC_READY.
            await send(GFDIFrame(type: GFDIType.configuration, payload: configuration.payload))
            if !handshakeDone {
                await send(GFDIFrame(type: GFDIType.systemEvent, payload: GarminSystemEvent(event: GarminSystemEvent.syncReady).payload))
                handshakeDone = true
                sink?.yield(.handshakeDone)
            }
        case GFDIType.currentTimeRequest:
            guard let request = try? GarminCurrentTimeRequest(payload: frame.payload) else {
                await send(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
                return
            }
            if givesTime {
                await send(timeAnswer(request).frame)
                timeAnswers += 1
                timeGiven = .now
            } else {
                heldTimeRequest = request
            }
            timeRequests += 1
            sink?.yield(.frame(frame))
        case GFDIType.synchronization, GFDIType.systemEvent:
            await send(GFDIResponse(originalType: frame.type, status: .ack).frame)
        case GFDIType.response:
            if handshakeDone, !syncReadyAcknowledged, (try? GFDIResponse(payload: frame.payload))?.originalType == GFDIType.systemEvent {
                syncReadyAcknowledged = true
            }
            sink?.yield(.frame(frame))
        case GFDIType.protobufResponse:
            // Every PROTOBUF response is acknowledged naming its request id (§7); the request waiting takes it.
            guard let message = try? GarminProtobufMessage(payload: frame.payload) else {
                await send(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
                return
            }
            await send(message.acknowledgement(of: frame.type).frame)
            sink?.yield(.frame(frame))
        case GFDIType.fileTransferData:
            if let sink {
                sink.yield(.frame(frame))
            } else {
                dropped.strayChunks += 1
                let offset = (try? GarminFileData(payload: frame.payload)).map(\.offset) ?? 0
                await send(GarminFileData(crc: 0, offset: offset, data: []).answer(.abort).frame)
            }
        default:
            await send(GFDIResponse(originalType: frame.type, status: .unsupported).frame)
        }
    }
}
