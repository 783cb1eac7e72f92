import Foundation
import TSModels
import TSProtocol

/// A recorded link session: when each connection opened and with what MTU, every write and
/// every notification with its time, and disconnects. Stored as JSON lines.
public struct CaptureEntry: Sendable, Hashable, Codable {
    public enum Direction: String, Sendable, Hashable, Codable {
        /// A connection opened; `bytes` is empty and `mtu` set.
        case open
        /// Central → watch write.
        case write
        /// Watch → central notification.
        case notification
        case disconnected
    }

    /// Seconds since the capture started.
    public var time: Double
    public var direction: Direction
    public var hex: String
    public var mtu: Int?

    public var bytes: [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
        }
    }

    public init(time: Double, direction: Direction, bytes: [UInt8], mtu: Int? = nil) {
        self.time = time
        self.direction = direction
        self.hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        self.mtu = mtu
    }
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
                throw TransportError.captureExhausted("line \(number + 1) of \(url.path) is not a capture entry: \(error)")
            }
        }
        return entries
    }
}

/// Wraps a transport and records everything that crosses it.
public final class RecordingTransport: WatchTransport, @unchecked Sendable {
    private let inner: any WatchTransport
    private let recorder = CaptureRecorder()

    public init(recording inner: any WatchTransport) {
        self.inner = inner
    }

    public func entries() async -> [CaptureEntry] { await recorder.entries }

    public func open() async throws -> any TransportConnection {
        let connection = try await inner.open()
        await recorder.add(.open, [], mtu: connection.mtu.value)
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
        return RecordingConnection(inner: connection, events: events, recorder: recorder)
    }
}

actor CaptureRecorder {
    private(set) var entries: [CaptureEntry] = []
    private let start = ContinuousClock.now

    func add(_ direction: CaptureEntry.Direction, _ bytes: [UInt8], mtu: Int? = nil) {
        let elapsed = ContinuousClock.now - start
        entries.append(CaptureEntry(time: elapsed.timeInterval, direction: direction, bytes: bytes, mtu: mtu))
    }
}

struct RecordingConnection: TransportConnection {
    let inner: any TransportConnection
    let events: AsyncStream<TransportEvent>
    let recorder: CaptureRecorder
    var mtu: ATTMTU { inner.mtu }

    func write(_ chunk: [UInt8]) async throws {
        await recorder.add(.write, chunk)
        try await inner.write(chunk)
    }

    func close() async { await inner.close() }
}
