import TSModels
import TSProtocol

/// What the device actor needs from a link to one watch: open it, write chunks to the watch's
/// write characteristic, and receive its notifications. Implemented over BlueZ GATT, over an
/// in-process loopback to the simulator, and by a capture replay.
public protocol WatchTransport: Sendable {
    /// Opens the link and returns the ATT MTU in use. Events of this connection, from the
    /// moment it is open, come through `events` of the returned connection.
    func open() async throws -> TransportConnection
}

/// One open link. Writes go out in call order; `events` yields notifications in arrival order
/// and ends after `.disconnected`.
public protocol TransportConnection: Sendable {
    var mtu: ATTMTU { get }
    var events: AsyncStream<TransportEvent> { get }
    /// One ATT write of at most `mtu.chunkSize` bytes.
    func write(_ chunk: [UInt8]) async throws
    func close() async
}

public enum TransportEvent: Sendable, Hashable {
    case notification([UInt8])
    case disconnected(reason: String)
}

public enum TransportError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    case notConnected
    case connectFailed(String)
    case chunkTooLarge(size: Int, limit: Int)
    case captureExhausted(String)

    public var description: String {
        switch self {
        case .notConnected: "the watch is not connected"
        case let .connectFailed(reason): "could not connect to the watch: \(reason)"
        case let .chunkTooLarge(size, limit): "a write of \(size) bytes exceeds the link's \(limit)-byte limit (MTU − 3)"
        case let .captureExhausted(detail): "the capture has no more traffic: \(detail)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .notConnected, .connectFailed: .unavailable
        case .chunkTooLarge, .captureExhausted: .protocolError
        }
    }
}

/// The watch side of an in-process link: what a peripheral implementation (the simulator)
/// offers a loopback transport. `send` delivers one notification to the central.
public protocol PeripheralEndpoint: Sendable {
    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async
    func centralWrote(_ chunk: [UInt8]) async
    func centralDisconnected() async
}
