import TSGATT
import TSModels

/// Plays a capture back to a central, whatever its dialect: each `open()` replays the next
/// recorded connection. Every write (on either pair, to a standard characteristic, or to one
/// addressed by service and UUID) must equal the recorded one (the same central logic with the
/// same inputs writes the same bytes), but for the times the dialect's `centralTimes` reads in
/// it (the central's clock, a sync's range), each of which may be off the recorded one by as much
/// as the recording lasted: its clock ran while it was recorded. A read gets the recorded value; after either,
/// the notifications recorded up to the next write or read are delivered on the channel they came over.
/// When the central asks for a connection the capture does not hold, the error names how the one
/// before it left the recording: that, not the missing connection, is what went wrong.
///
/// A close the watch made (a lost link, a band that hangs up) comes after the notifications
/// recorded before it have had `watchCloseGrace` to reach the central, or at its next request,
/// which a closed link refuses: delivered at once it would race them, since a central reads its
/// link's events and each characteristic's notifications in tasks of their own (CI at 7c9ea03
/// lost a sync's last reply on a second pair so and reconnected past the capture's end).
public actor ReplayTransport: WatchTransport {
    private var connections: [[CaptureEntry]]
    private let clock: ReplayedClock
    /// The connection opened last, and how many were: only the last one's departure is said.
    private var lastPlayed: ReplayConnection?
    private var openedCount = 0

    /// How long a recorded close of the watch's waits for the central to take what came before it.
    public static let watchCloseGrace: Duration = .milliseconds(500)

    public init(capture: [CaptureEntry], centralTimes: (any CentralTimeReader)? = nil) {
        connections = CapturedConnections.split(capture)
        let times = capture.map(\.time)
        clock = ReplayedClock(reader: centralTimes, slack: Int64(((times.max() ?? 0) - (times.min() ?? 0)).rounded(.up)) + 1)
    }

    public func open() async throws -> any TransportConnection {
        guard !connections.isEmpty else {
            var detail = "no recorded connection left to open"
            if let lastPlayed, let departure = await lastPlayed.departure() {
                detail += " (connection \(openedCount) of \(openedCount) ended before the recording did: \(departure))"
            } else if openedCount > 0 {
                detail += " (connection \(openedCount) of \(openedCount) was played to its end and the central gave it up; -v says why)"
            }
            throw TransportError.captureExhausted(detail)
        }
        let segment = connections.removeFirst()
        let opened = segment[0]
        let mtu = try ATTMTU(opened.mtu ?? ATTMTU.minimum)
        let standard = Set((opened.standard ?? []).compactMap(StandardCharacteristic.init(rawValue:)))
        let characteristics = Set((opened.characteristics ?? []).compactMap { CaptureChannel(rawValue: $0)?.characteristic })
        let connection = ReplayConnection(mtu: mtu, entries: Array(segment.dropFirst()), name: opened.name, standard: standard,
                                          secondChannel: opened.secondChannel == true, characteristics: characteristics, clock: clock)
        lastPlayed = connection
        openedCount += 1
        await connection.deliverUntilNextRequest()
        return connection
    }
}

actor ReplayConnection: TransportConnection {
    nonisolated let mtu: ATTMTU
    nonisolated let events: AsyncStream<TransportEvent>
    nonisolated let secondChannelNotifications: AsyncStream<[UInt8]>?
    nonisolated let standardCharacteristics: Set<StandardCharacteristic>
    nonisolated let services: ServiceSet
    nonisolated let characteristics: Set<GATTCharacteristicID>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let secondContinuation: AsyncStream<[UInt8]>.Continuation?
    private var entries: ArraySlice<CaptureEntry>
    private let name: String?
    private var isOpen = true
    /// The first request that left the recording, as the central was told.
    private var leftAt: String?
    /// Who listens to each characteristic's notifications, and what came before anyone listened.
    private var subscribers: [CaptureChannel: [AsyncStream<[UInt8]>.Continuation]] = [:]
    private var held: [CaptureChannel: [[UInt8]]] = [:]
    private let clock: ReplayedClock

    init(mtu: ATTMTU, entries: [CaptureEntry], name: String?, standard: Set<StandardCharacteristic>, secondChannel: Bool,
         characteristics: Set<GATTCharacteristicID>, clock: ReplayedClock) {
        self.mtu = mtu
        self.clock = clock
        self.characteristics = characteristics
        self.entries = entries[...]
        self.name = name
        standardCharacteristics = standard
        services = ServiceSet([.protocolV1] + standard.services)
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        if secondChannel {
            let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
            (secondChannelNotifications, secondContinuation) = (stream, continuation)
        } else {
            (secondChannelNotifications, secondContinuation) = (nil, nil)
        }
    }

    func peripheralName() async -> String? { name }

    /// How this connection left its recording, if it did: the first request that differed, or
    /// the central's close while recorded traffic was still to come.
    func departure() -> String? {
        if let leftAt { return leftAt }
        let unplayed = entries.filter { $0.direction != .disconnected }
        guard !unplayed.isEmpty else { return nil }
        return "the link ended with \(unplayed.count) recorded entries unplayed, the next \(Self.describe(unplayed.first))"
    }

    /// Throws `error`, keeping the first such departure for `departure()`.
    private func leave(_ error: TransportError) -> TransportError {
        if leftAt == nil { leftAt = error.description }
        return error
    }

    func write(_ chunk: [UInt8]) async throws {
        try expectWrite(chunk, channel: .main, characteristic: nil)
    }

    func writeSecondChannel(_ chunk: [UInt8]) async throws {
        guard secondContinuation != nil else { throw TransportError.noSecondChannel }
        try expectWrite(chunk, channel: .second, characteristic: nil)
    }

    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        try expectWrite(value, channel: .main, characteristic: characteristic)
    }

    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        try refuseIfClosed()
        guard let next = entries.first, next.direction == .read, next.characteristic == characteristic.rawValue else {
            throw leave(.captureDiffers("the central read \(characteristic.title) where the capture has \(Self.describe(entries.first))"))
        }
        entries.removeFirst()
        deliverUntilNextRequest()
        return next.bytes
    }

    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        try refuseIfClosed()
        let channel = CaptureChannel(characteristic)
        guard let next = entries.first, next.direction == .read, next.characteristic == nil, next.pair == channel else {
            throw leave(.captureDiffers("the central read the \(characteristic) where the capture has \(Self.describe(entries.first))"))
        }
        entries.removeFirst()
        deliverUntilNextRequest()
        return next.bytes
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        try expectWrite(value, channel: CaptureChannel(characteristic), characteristic: nil)
    }

    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        guard characteristics.contains(characteristic) else { throw TransportError.noCharacteristic(characteristic) }
        let channel = CaptureChannel(characteristic)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        for value in held.removeValue(forKey: channel) ?? [] { continuation.yield(value) }
        if isOpen { subscribers[channel, default: []].append(continuation) } else { continuation.finish() }
        return stream
    }

    /// A request on a closed link, or one the watch closed after the recorded traffic before it:
    /// the recorded central's request never reached the watch either.
    private func refuseIfClosed() throws {
        if isOpen, let next = entries.first, next.direction == .disconnected, next.byCentral != true {
            entries.removeFirst()
            end(reason: "recorded disconnect")
        }
        guard isOpen else { throw TransportError.notConnected }
    }

    private func expectWrite(_ chunk: [UInt8], channel: CaptureChannel, characteristic: StandardCharacteristic?) throws {
        try refuseIfClosed()
        guard let next = entries.first, next.direction == .write, next.pair == channel, next.characteristic == characteristic?.rawValue else {
            throw leave(.captureDiffers("the central wrote \(chunk.count) bytes\(Self.where(channel, characteristic)) where the capture has \(Self.describe(entries.first))"))
        }
        if next.bytes != chunk, characteristic == nil, let difference = clock.difference(written: chunk, recorded: next.bytes, recordedHex: next.hex, channel: channel) {
            throw leave(.captureDiffers(difference))
        } else if next.bytes != chunk, characteristic != nil {
            throw leave(.captureDiffers("the central wrote other bytes than recorded (recorded \(next.hex))"))
        }
        entries.removeFirst()
        deliverUntilNextRequest()
    }

    /// Delivers what the watch sent before the central's next write or read.
    func deliverUntilNextRequest() {
        // The central's own close is its to make again: the link stays up until it does, so what
        // came before has time to reach it over every characteristic's stream.
        while let entry = entries.first, entry.direction != .write, entry.direction != .read, entry.byCentral != true {
            if entry.direction == .disconnected {
                // Left in place: the close waits its grace (or the central's next request, `refuseIfClosed`).
                Task { [weak self] in
                    try? await Task.sleep(for: ReplayTransport.watchCloseGrace)
                    await self?.watchClosed()
                }
                return
            }
            entries.removeFirst()
            switch entry.direction {
            case .notification:
                if entry.pair.characteristic != nil {
                    if let listeners = subscribers[entry.pair], !listeners.isEmpty {
                        listeners.forEach { $0.yield(entry.bytes) }
                    } else {
                        held[entry.pair, default: []].append(entry.bytes)
                    }
                } else if entry.pair == .second {
                    secondContinuation?.yield(entry.bytes)
                } else {
                    continuation.yield(.notification(entry.bytes))
                }
            case .open, .write, .read, .disconnected: break
            }
        }
    }

    func close() async {
        end(reason: "closed by the central")
    }

    /// The watch's recorded close, after its grace, if the link is still up.
    private func watchClosed() {
        guard isOpen, let next = entries.first, next.direction == .disconnected else { return }
        entries.removeFirst()
        end(reason: "recorded disconnect")
    }

    private func end(reason: String) {
        guard isOpen else { return }
        isOpen = false
        continuation.yield(.disconnected(reason: reason))
        continuation.finish()
        secondContinuation?.finish()
        subscribers.values.joined().forEach { $0.finish() }
        subscribers = [:]
    }

    private static func `where`(_ channel: CaptureChannel, _ characteristic: StandardCharacteristic?) -> String {
        if let characteristic { return " to \(characteristic.title)" }
        if let addressed = channel.characteristic { return " to the \(addressed)" }
        return channel == .second ? " to the second pair" : ""
    }

    private static func describe(_ entry: CaptureEntry?) -> String {
        guard let entry else { return "its end" }
        switch entry.direction {
        case .write: return "a write\(Self.where(entry.pair, entry.characteristic.flatMap(StandardCharacteristic.init(rawValue:))))"
        case .read: return "a read of \(entry.characteristic ?? entry.pair.characteristic.map { "the \($0)" } ?? "a characteristic")"
        default: return entry.direction.rawValue
        }
    }
}

/// The times a replayed central writes against the recorded ones: each may be off the recorded
/// one by no more than the recording lasted (a clock that ran while it was recorded, or one given
/// as the recording's start with `--now`).
struct ReplayedClock: Sendable {
    let reader: (any CentralTimeReader)?
    /// The recording's duration, rounded up, and a second for the fields' resolution.
    let slack: Int64

    /// Why `written` is not `recorded` as the replay takes it; nil when it is (equal but for times
    /// within the slack).
    func difference(written: [UInt8], recorded: [UInt8], recordedHex: String, channel: CaptureChannel) -> String? {
        let other = "the central wrote other bytes than recorded (recorded \(recordedHex))"
        guard let reader, let now = reader.centralTimes(in: written, channel: channel),
              let then = reader.centralTimes(in: recorded, channel: channel) else { return other }
        guard now.rest == then.rest, now.fields.map(\.kind) == then.fields.map(\.kind) else {
            return other + ", beyond the clock and range it carries"
        }
        for (mine, theirs) in zip(now.fields, then.fields) where abs(mine.time - theirs.time) > slack {
            return "the central wrote \(mine.kind == .rangeStart ? "a range start" : "its clock") \(mine.time) where the capture has \(theirs.time): "
                + "\(mine.time - theirs.time) s off, more than the \(slack) s the recording allows (its duration)"
        }
        return nil
    }
}
