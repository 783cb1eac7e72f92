import Foundation
import TSDevice
import TSGATT
import TSModels
import TSQRing
import TSTransport

/// What a QRing central dropped instead of delivering, since it was made.
public struct QRingDropCounts: Sendable, Hashable {
    /// Packets on the command channel no request waited for that were damaged (length,
    /// checksum, the error bit) or are not read by this dialect.
    public var packets = 0
    /// Big-data frames whose CRC did not match.
    public var crcMismatches = 0
    /// Big-data frames whose bytes never all arrived (the request timed out, the link ended).
    public var incompleteFrames = 0
    /// Bytes on the big-data channel outside any frame, and frame starts whose length was impossible.
    public var garbageBytes = 0
    public var falseFrameStarts = 0
    /// Big-data frames of a type no request asked for.
    public var unexpectedFrames = 0
    /// Sleep (stage, minutes) pairs of stage 0 (no data) or 1 (error): their minutes pass, no record is made.
    public var sleepPairs = 0
    /// Real-time heart-rate packets that were damaged.
    public var heartRatePackets = 0
}

/// QRing rings (Colmi R02–R12, Yawell) behind the seam (protocol-spec/qring/qring.md): 16-byte packets
/// on the command pair, one request in flight, each answer matched by its command byte; sleep as
/// big-data frames on the second pair; Device Information over the standard service. The ring's
/// clock runs on the gateway zone's wall-clock time (§7).
public actor QRingWatch: LinkedCentral {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    public private(set) var info: DeviceInfo?
    public package(set) var connectTimings = ConnectTimings()
    /// What the set-time answer said: the ring sends sleep as big data. Nil until the clock was set.
    public internal(set) var newSleepProtocol: Bool?
    var dropped = QRingDropCounts()
    /// The link had the big-data pair when it opened (sleep comes that way).
    private var hasBigDataChannel = false
    /// One for the central's lifetime: a frame cut off by a lost link is expired (counted) on the next connect.
    var bigData = BigDataReassembler()

    package var connection: (any TransportConnection)?
    package var connectionGeneration = 0
    private var answerSink: (command: UInt8, continuation: AsyncStream<Delivery>.Continuation)?
    var bigDataSink: AsyncStream<Delivery>.Continuation?
    /// When the last big-data bytes arrived (or the request went out).
    var bigDataProgress = ContinuousClock.now
    package var requestTurns = RequestTurns()
    /// Battery levels the ring pushes, to every `batteryLevelChanges()` stream until the link ends.
    let batteryLevels = EventFanOut<UInt8>(buffer: 16)
    var heartRateStreams: [UUID: HeartRateSubscriber] = [:]
    let fanOut = EventFanOut<WatchEvent>(buffer: 64)

    /// What reaches a waiting request.
    enum Delivery: Sendable {
        case bytes([UInt8])
        case timedOut(afterPackets: Int)
        case linkLost(String)
    }

    struct HeartRateSubscriber {
        var continuation: AsyncStream<HeartRateMeasurement>.Continuation
        var malformed: (@Sendable (StandardValueError) -> Void)?
    }

    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration()) {
        self.transport = transport
        self.configuration = configuration
    }

    public nonisolated var dialect: Dialect { .qring }
    public nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }
    public var isConnected: Bool { connection != nil }
    public var linkMTU: Int? { connection?.mtu.value }

    /// Everything dropped so far, the big-data reassembler's counts included.
    public var drops: QRingDropCounts {
        var counts = dropped
        counts.crcMismatches = bigData.crcMismatches
        counts.incompleteFrames = bigData.incomplete
        counts.garbageBytes = bigData.garbageBytes
        counts.falseFrameStarts = bigData.oversized
        return counts
    }

    public var capabilities: WatchCapabilities { info?.capabilities ?? .nothing }

    /// No alarms; sleep only through the big-data service, which some rings lack.
    static func capabilities(bigData: Bool) -> WatchCapabilities {
        WatchCapabilities(
            alarms: nil, monitorTypes: QRingWatch.monitorTypes,
            sleepSync: bigData ? .init(selection: .range, paged: true, deletesSynced: false, acknowledges: false) : nil,
            battery: true, batteryNotifications: true, clock: true, heartRate: true, heartRateHistory: true)
    }

    /// The heart-rate log's settings, and the SpO2 and stress switches.
    public static let monitorTypes: [MonitorType] = [.heartRate, .spo2, .stress]

    // MARK: Connecting

    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        bigData.expire()
        let (opened, generation, _) = try await openLink()
        hasBigDataChannel = opened.secondChannelNotifications != nil
        if let bulk = opened.secondChannelNotifications {
            Task { [weak self] in
                for await chunk in bulk { await self?.receivedBigData(chunk, generation: generation) }
            }
        }
        return try await describing {
            let described = try await describe(opened)
            info = described
            if configuration.syncTimeOnConnect { try await syncTime() }
            return described
        }
    }

    /// Device Information's strings; the advertised name (`R02_341C`) is the model when there is one.
    private func describe(_ link: any TransportConnection) async throws -> DeviceInfo {
        func string(_ characteristic: StandardCharacteristic) async throws -> String? {
            guard link.standardCharacteristics.contains(characteristic) else { return nil }
            return String(decoding: try await link.read(characteristic), as: UTF8.self).trimmingCharacters(in: .whitespaces.union(.controlCharacters))
        }
        let hardware = try await string(.hardwareRevision)
        let firmware = try await string(.firmwareRevision)
        let name = await link.peripheralName()
        let capabilities = Self.capabilities(bigData: hasBigDataChannel)
        return DeviceInfo(model: name ?? hardware ?? "QRing ring", firmware: firmware ?? "unknown", capabilities: capabilities,
                          // The transport counts the dialect's own service as `.protocolV1`; the ring's is not v1's.
                          services: ServiceSet(link.services.sorted.filter { $0 != .protocolV1 }), standard: StandardDeviceInformation(hardwareRevision: hardware, firmwareRevision: firmware),
                          dialect: .qring)
    }

    public func disconnect() async { await closeLink() }

    package func releaseLink(reason: String) {
        answerSink?.continuation.yield(.linkLost(reason))
        bigDataSink?.yield(.linkLost(reason))
        batteryLevels.finishAll()
        heartRateStreams.values.forEach { $0.continuation.finish() }
        heartRateStreams = [:]
        fanOut.send(.linkLost(reason: reason))
    }

    // MARK: Requests

    /// Sends `packet` and hands each packet of its command (the error bit aside) to `collect`
    /// until it returns a result; one request is in flight at a time. A damaged answer fails the
    /// request with its `QRingError`. The answer is the request's whether it comes before the
    /// write's response or after it; a request is never sent again, so the wait for its first
    /// packet is `singleAttemptTimeout` (it was one request timeout, as short as a Huami
    /// exchange's was). Each packet of an answer that spans several starts the wait again, at
    /// `pageIdleTimeout`: a whole day's heart-rate log is 24 packets, and the time they take
    /// together grows with the connection interval, not with whether the ring is still there
    /// (CI at be34d89 timed out one that was still arriving, and its tail then reached the next
    /// request).
    func exchange<Result: Sendable>(_ packet: QRingPacket, timeout: Duration? = nil,
                                    collect: ([UInt8]) throws -> Result?) async throws -> Result {
        await takeTurn()
        defer { endTurn() }
        guard let link = connection else { throw WatchError.notConnected }
        let (deliveries, continuation) = AsyncStream.makeStream(of: Delivery.self)
        answerSink = (packet.command, continuation)
        defer {
            answerSink = nil
            continuation.finish()
        }
        func startTimer(_ wait: Duration, packets: Int) -> Task<Void, Never> {
            Task {
                try? await Task.sleep(for: wait)
                if !Task.isCancelled { continuation.yield(.timedOut(afterPackets: packets)) }
            }
        }
        var packets = 0
        var timer = startTimer(timeout ?? configuration.singleAttemptTimeout, packets: packets)
        defer { timer.cancel() }
        configuration.traffic?("writing \(Self.hex(packet.bytes)) for the \(Self.name(of: packet.command)) request")
        do {
            try await link.write(packet.bytes)
        } catch let error as TransportError {
            throw error.category == .unavailable ? WatchError.disconnected(error.description) : error
        }
        for await delivery in deliveries {
            switch delivery {
            case let .bytes(bytes):
                if let result = try collect(bytes) { return result }
                packets += 1
                timer.cancel()
                timer = startTimer(configuration.pageIdleTimeout, packets: packets)
            case let .timedOut(afterPackets):
                // A timer cancelled just as it fired may still have spoken: only the latest counts.
                guard afterPackets == packets else { continue }
                let what = Self.name(of: packet.command)
                throw WatchError.timeout(command: packets == 0 ? what : "\(what) (its answer stopped after \(packets) packets)", attempts: 1)
            case let .linkLost(reason):
                throw WatchError.disconnected(reason)
            }
        }
        throw WatchError.disconnected("the link ended while waiting for the answer")
    }

    /// A request answered by one packet.
    /// The answer to `packet` that `accepts` takes; an answer of the same command it does not take
    /// (a setting's write answer when its read was asked for) is an earlier request's copy and is
    /// passed over: QRing's answers carry only their command byte (issue 47's answers twice).
    func request(_ packet: QRingPacket, accepts: @escaping (QRingAnswer) -> Bool = { _ in true }) async throws -> QRingAnswer {
        try await exchange(packet) { bytes in
            let answer = try QRingAnswer(packet: bytes)
            return accepts(answer) ? answer : nil
        }
    }

    /// Writes without waiting for an answer (real-time measurement start and stop).
    func send(_ packet: QRingPacket) async throws {
        guard let link = connection else { throw WatchError.notConnected }
        try await link.write(packet.bytes)
    }


    /// `15 01 00 …` (the first bytes of a packet, for `-v`).
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.prefix(4).map { String(format: "%02x", $0) }.joined(separator: " ") + (bytes.count > 4 ? " …" : "")
    }

    static func name(of command: UInt8) -> String {
        let names: [UInt8: String] = [
            QRingCommand.setTime: "set time", QRingCommand.battery: "battery", QRingCommand.heartRateLog: "heart-rate log",
            QRingCommand.heartRateLogSettings: "heart-rate log settings", QRingCommand.spo2Switch: "SpO2 switch",
            QRingCommand.stressSwitch: "stress switch", QRingCommand.hrvSwitch: "HRV switch", QRingCommand.steps: "steps",
        ]
        return names[command] ?? "command 0x" + String(command, radix: 16)
    }

    // MARK: Receiving

    package func received(_ bytes: [UInt8]) {
        let command = (bytes.first ?? 0) & ~QRingPacket.errorBit
        if let sink = answerSink, sink.command == command, !bytes.isEmpty {
            configuration.traffic?("packet \(Self.hex(bytes)) → the \(Self.name(of: command)) request")
            sink.continuation.yield(.bytes(bytes))
            return
        }
        if command != QRingCommand.realTimeStart {
            configuration.traffic?("packet \(Self.hex(bytes)) arrived with no \(Self.name(of: command)) request waiting: read as the ring's own news")
        }
        if command == QRingCommand.realTimeStart {
            realTimeReading(bytes)
            return
        }
        guard let answer = try? QRingAnswer(packet: bytes) else {
            dropped.packets += 1
            return
        }
        switch answer {
        case let .batteryPushed(battery):
            batteryLevels.send(UInt8(battery.level))
        case .newData, .notice, .realTimeStopped:
            break
        default:
            dropped.packets += 1
        }
    }

    private func receivedBigData(_ chunk: [UInt8], generation: Int) {
        guard generation == connectionGeneration else { return }
        bigDataProgress = .now
        for frame in bigData.feed(chunk) {
            if let sink = bigDataSink, frame.type == BigDataFrame.sleepType {
                sink.yield(.bytes(frame.payload))
            } else {
                dropped.unexpectedFrames += 1
            }
        }
    }
}
