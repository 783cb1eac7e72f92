import Foundation
import TSGATT
import TSModels

/// A recorded link session, whatever dialect it carries: when each connection opened and with
/// what MTU, every write and every notification with its time and the channel it went over (a
/// pair of the dialect's profile, or a characteristic it names), reads, and disconnects. Stored
/// as JSON lines; keys that do not apply are left out, so a capture of the first pair alone reads
/// as it always has.
public struct CaptureEntry: Sendable, Hashable, Codable {
    public enum Direction: String, Sendable, Hashable, Codable {
        /// A connection opened; `bytes` is empty and `mtu` set.
        case open
        /// Central → watch write.
        case write
        /// Watch → central notification.
        case notification
        /// A value the central read: of a standard characteristic (`characteristic`) or of a channel's.
        case read
        case disconnected
    }

    /// Seconds since the capture started.
    public var time: Double
    public var direction: Direction
    public var hex: String
    public var mtu: Int?
    /// The dialect's pair or characteristic a write, notification or read went over; nil: the first pair.
    public var channel: CaptureChannel?
    /// A standard characteristic read or written (`StandardCharacteristic`'s raw value); nil: the dialect's own.
    public var characteristic: String?
    /// On `open`: the name the peripheral gave itself.
    public var name: String?
    /// On `open`: the standard characteristics the link had (raw values); nil: none.
    public var standard: [String]?
    /// On `open`: the link had the dialect's second pair.
    public var secondChannel: Bool?
    /// On `open`: the characteristics addressed by service and UUID the link had (`CaptureChannel`
    /// raw values); nil: none.
    public var characteristics: [String]?
    /// On `disconnected`: the central closed the link (nil: the watch or the link ended it).
    public var byCentral: Bool?
    /// On `open`: the dialect whose exchange the capture holds (`protocol decode --to-capture`
    /// names it; `protocol replay` plays the capture to that dialect's central).
    public var dialect: String?

    public var bytes: [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
        }
    }

    public init(time: Double, direction: Direction, bytes: [UInt8], mtu: Int? = nil, channel: CaptureChannel? = nil,
                characteristic: StandardCharacteristic? = nil) {
        self.time = time
        self.direction = direction
        self.hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        self.mtu = mtu
        self.channel = channel == .main ? nil : channel
        self.characteristic = characteristic?.rawValue
    }

    /// The pair a write or notification went over.
    public var pair: CaptureChannel { channel ?? .main }
}

public enum CaptureFile {
    public static func write(_ entries: [CaptureEntry], to url: URL) throws {
        try lines(entries).write(to: url, options: .atomic)
    }

    /// The file's text: one JSON object a line, keys sorted.
    public static func lines(_ entries: [CaptureEntry]) throws -> Data {
        let encoder = JSONCoding.recordEncoder()
        var text = Data()
        for entry in entries {
            text.append(try encoder.encode(entry))
            text.append(0x0A)
        }
        return text
    }

    public static func read(from url: URL) throws -> [CaptureEntry] {
        let data = try Data(contentsOf: url)
        var entries: [CaptureEntry] = []
        for (number, line) in data.split(separator: 0x0A).enumerated() where !line.isEmpty {
            do {
                entries.append(try JSONDecoder().decode(CaptureEntry.self, from: Data(line)))
            } catch {
                throw TransportError.captureUnreadable("line \(number + 1) of \(url.path) is not a capture entry: \(error)")
            }
        }
        return entries
    }
}

/// Wraps a transport and records everything that crosses it: both write/notify pairs, reads and
/// writes of standard characteristics and of characteristics addressed by service and UUID, and
/// what the link said of itself when it opened.
public final class RecordingTransport: WatchTransport, @unchecked Sendable {
    private let inner: any WatchTransport
    private let recorder = CaptureRecorder()

    public init(recording inner: any WatchTransport) {
        self.inner = inner
    }

    public func entries() async -> [CaptureEntry] { await recorder.entries }

    public func open() async throws -> any TransportConnection {
        let connection = try await inner.open()
        var opened = CaptureEntry(time: 0, direction: .open, bytes: [], mtu: connection.mtu.value)
        opened.name = await connection.peripheralName()
        let standard = connection.standardCharacteristics.map(\.rawValue).sorted()
        opened.standard = standard.isEmpty ? nil : standard
        opened.secondChannel = connection.secondChannelNotifications == nil ? nil : true
        let characteristics = connection.characteristics.map { CaptureChannel($0).rawValue }.sorted()
        opened.characteristics = characteristics.isEmpty ? nil : characteristics
        await recorder.add(opened)
        let recorder = self.recorder
        let (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        Task {
            for await event in connection.events {
                switch event {
                case let .notification(bytes): await recorder.add(.notification, bytes)
                case .disconnected: await recorder.add(.disconnected, [])
                }
                continuation.yield(event)
            }
            continuation.finish()
        }
        var second: AsyncStream<[UInt8]>?
        if let inner = connection.secondChannelNotifications {
            let (stream, forward) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
            second = stream
            Task {
                for await bytes in inner {
                    await recorder.add(.notification, bytes, channel: .second)
                    forward.yield(bytes)
                }
                forward.finish()
            }
        }
        return RecordingConnection(inner: connection, events: events, secondChannelNotifications: second, recorder: recorder)
    }
}

actor CaptureRecorder {
    private(set) var entries: [CaptureEntry] = []
    private let start = ContinuousClock.now
    /// The central is closing the link: the disconnect that follows is its own.
    private var closing = false

    func centralCloses() { closing = true }

    func add(_ direction: CaptureEntry.Direction, _ bytes: [UInt8], channel: CaptureChannel? = nil, characteristic: StandardCharacteristic? = nil) {
        add(CaptureEntry(time: 0, direction: direction, bytes: bytes, channel: channel, characteristic: characteristic))
    }

    func add(_ entry: CaptureEntry) {
        var entry = entry
        entry.time = (ContinuousClock.now - start).timeInterval
        if entry.direction == .open { closing = false }
        if entry.direction == .disconnected, closing { entry.byCentral = true }
        entries.append(entry)
    }
}

struct RecordingConnection: TransportConnection {
    let inner: any TransportConnection
    let events: AsyncStream<TransportEvent>
    let secondChannelNotifications: AsyncStream<[UInt8]>?
    let recorder: CaptureRecorder
    var mtu: ATTMTU { inner.mtu }
    var services: ServiceSet { inner.services }
    var standardCharacteristics: Set<StandardCharacteristic> { inner.standardCharacteristics }

    func write(_ chunk: [UInt8]) async throws {
        await recorder.add(.write, chunk)
        try await inner.write(chunk)
    }

    func writeSecondChannel(_ chunk: [UInt8]) async throws {
        await recorder.add(.write, chunk, channel: .second)
        try await inner.writeSecondChannel(chunk)
    }

    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        let value = try await inner.read(characteristic)
        await recorder.add(.read, value, characteristic: characteristic)
        return value
    }

    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        await recorder.add(.write, value, characteristic: characteristic)
        try await inner.write(value, to: characteristic)
    }

    func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]> {
        try await inner.notifications(of: characteristic)
    }

    func peripheralName() async -> String? { await inner.peripheralName() }

    func close() async {
        await recorder.centralCloses()
        await inner.close()
    }

    var characteristics: Set<GATTCharacteristicID> { inner.characteristics }

    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        let value = try await inner.read(characteristic)
        await recorder.add(.read, value, channel: CaptureChannel(characteristic))
        return value
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        await recorder.add(.write, value, channel: CaptureChannel(characteristic))
        try await inner.write(value, to: characteristic, withResponse: withResponse)
    }

    /// Each value is recorded before the central gets it, so the capture holds it before whatever the central writes next.
    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        let values = try await inner.notifications(of: characteristic)
        let (stream, forward) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        let recorder = self.recorder, channel = CaptureChannel(characteristic)
        let task = Task {
            for await bytes in values {
                await recorder.add(.notification, bytes, channel: channel)
                forward.yield(bytes)
            }
            forward.finish()
        }
        forward.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// A capture's connections, each from its `open` up to the next, and what each holds of a sleep sync.
public enum CapturedConnections {
    /// Each `open` with the entries after it, in order; entries before the first `open` belong to none.
    public static func split(_ entries: [CaptureEntry]) -> [[CaptureEntry]] {
        var connections: [[CaptureEntry]] = []
        for entry in entries {
            if entry.direction == .open { connections.append([entry]) } else if !connections.isEmpty { connections[connections.count - 1].append(entry) }
        }
        return connections
    }

    /// The sleep items `decoder` reads in one connection: the `records` of each frame's meaning
    /// (under `body` for v1), as `protocol decode --json` shows them.
    public static func sleepItems(in connection: [CaptureEntry], decoder: any CaptureDecoder) -> [SleepItem] {
        sleepItems(in: frames(of: connection, decoder: decoder, started: nil))
    }

    /// One connection's values through one decoder session in their order, then what each stream left.
    public static func frames(of connection: [CaptureEntry], decoder: any CaptureDecoder, started: Date?) -> [DecodedFrame] {
        var session = decoder.session(started: started, peripheralName: connection.first { $0.direction == .open }?.name)
        var frames: [DecodedFrame] = []
        var streams: [(CaptureChannel, CaptureFlow)] = []
        for entry in connection where entry.characteristic == nil {
            let flow: CaptureFlow
            switch entry.direction {
            case .write: flow = .write
            case .notification: flow = .notification
            case .read: flow = .read
            case .open, .disconnected: continue
            }
            if !streams.contains(where: { $0 == (entry.pair, flow) }) { streams.append((entry.pair, flow)) }
            frames += session.append(entry.bytes, channel: entry.pair, flow: flow)
        }
        for (channel, flow) in streams { frames += session.finish(channel: channel, flow: flow) }
        return frames
    }

    /// The sleep items of the frames that pass every check.
    public static func sleepItems(in frames: [DecodedFrame]) -> [SleepItem] {
        let encoder = JSONCoding.encoder()
        return frames.filter { $0.verdict == .frame }.compactMap(\.meaning).flatMap { meaning -> [SleepItem] in
            guard let data = try? encoder.encode(EncodedMeaning(meaning)), let object = try? JSONSerialization.jsonObject(with: data) else { return [] }
            return records(in: object)
        }
    }

    private static func records(in object: Any) -> [SleepItem] {
        guard let dictionary = object as? [String: Any] else { return [] }
        var items: [SleepItem] = []
        if let list = dictionary["records"] as? [Any], let data = try? JSONSerialization.data(withJSONObject: list),
           let decoded = try? JSONDecoder().decode([SleepItem].self, from: data) {
            items += decoded
        }
        if let body = dictionary["body"] { items += records(in: body) }
        return items
    }

    private struct EncodedMeaning: Encodable {
        let value: any Encodable
        init(_ value: any Encodable) { self.value = value }
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }
}
