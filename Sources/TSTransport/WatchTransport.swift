import TSModels
import TSGATT

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
    /// The services GATT discovery found when the link opened.
    var services: ServiceSet { get }
    /// The standard characteristics the watch has.
    var standardCharacteristics: Set<StandardCharacteristic> { get }
    /// Reads a standard characteristic's value.
    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8]
    /// Writes a standard characteristic's value (a write request).
    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws
    /// Notifications of a standard characteristic until the link ends or the stream is dropped.
    func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]>
    /// The name the peripheral gives itself (advertised or its GAP Device Name), if it gives one.
    func peripheralName() async -> String?
    /// Notifications of the dialect's second write/notify pair (`GATTProfile.secondChannel`),
    /// from the moment the link opened until it ends; nil: the link has no second pair.
    var secondChannelNotifications: AsyncStream<[UInt8]>? { get }
    /// One ATT write of at most `mtu.chunkSize` bytes to the second pair's write characteristic.
    func writeSecondChannel(_ chunk: [UInt8]) async throws
    /// The characteristics of the peripheral that can be addressed by service and UUID, for a
    /// dialect that speaks over more than its profile's pairs; empty on links that offer none.
    var characteristics: Set<GATTCharacteristicID> { get }
    /// Reads a characteristic's value (an ATT Read Request).
    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8]
    /// Writes a characteristic's value, as a Write Request or a Write Command.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws
    /// Notifications of a characteristic, from the moment this returns until the link ends or the
    /// stream is dropped: subscribe before the write whose answer it carries.
    func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]>
}

extension TransportConnection {
    /// A link that knows only protocol v1 (captures, links to a peripheral without standard services).
    public var services: ServiceSet { .protocolV1Only }
    public var standardCharacteristics: Set<StandardCharacteristic> { [] }
    public func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] { throw TransportError.characteristicMissing(characteristic) }
    public func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws { throw TransportError.characteristicMissing(characteristic) }
    public func notifications(of characteristic: StandardCharacteristic) async throws -> AsyncStream<[UInt8]> { throw TransportError.characteristicMissing(characteristic) }
    public func peripheralName() async -> String? { nil }
    public var secondChannelNotifications: AsyncStream<[UInt8]>? { nil }
    public func writeSecondChannel(_ chunk: [UInt8]) async throws { throw TransportError.noSecondChannel }
    public var characteristics: Set<GATTCharacteristicID> { [] }
    public func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] { throw TransportError.noCharacteristic(characteristic) }
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws {
        throw TransportError.noCharacteristic(characteristic)
    }
    public func notifications(of characteristic: GATTCharacteristicID) async throws -> AsyncStream<[UInt8]> {
        throw TransportError.noCharacteristic(characteristic)
    }
}

public enum TransportEvent: Sendable, Hashable {
    case notification([UInt8])
    case disconnected(reason: String)
}

public enum TransportError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    case notConnected
    case connectFailed(String)
    case chunkTooLarge(size: Int, limit: Int)
    /// A replay's capture has no recorded connection left to open.
    case captureExhausted(String)
    /// A replayed central asked other than the recorded one (another write, a read where none was recorded).
    case captureDiffers(String)
    /// A capture file that is not JSON lines of capture entries.
    case captureUnreadable(String)
    /// The watch has no such standard characteristic.
    case characteristicMissing(StandardCharacteristic)
    /// The watch has no protocol v1 service, so the link carries no frames.
    case noProtocolV1
    /// The link has no second write/notify pair (the dialect's profile names none, or the watch lacks its service).
    case noSecondChannel
    /// The peripheral has no such characteristic (addressed by service and UUID).
    case noCharacteristic(GATTCharacteristicID)

    public var description: String {
        switch self {
        case .notConnected: "the watch is not connected"
        case let .connectFailed(reason): "could not connect to the watch: \(reason)"
        case let .chunkTooLarge(size, limit): "a write of \(size) bytes exceeds the link's \(limit)-byte limit (MTU − 3)"
        case let .captureExhausted(detail): "the capture has no more traffic: \(detail)"
        case let .captureDiffers(detail): "the central left the capture: \(detail)"
        case let .captureUnreadable(detail): "the capture is unreadable: \(detail)"
        case let .characteristicMissing(characteristic): "the watch has no \(characteristic.title) characteristic"
        case .noProtocolV1: "the watch has no protocol v1 service"
        case .noSecondChannel: "the watch has no second channel (the service its dialect uses for bulk data)"
        case let .noCharacteristic(characteristic): "the watch has no \(characteristic)"
        }
    }

    /// A replayed central that left its capture: nothing after it follows the recording.
    public var isReplayDeparture: Bool {
        switch self {
        case .captureDiffers, .captureExhausted: true
        default: false
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .notConnected, .connectFailed: .unavailable
        case .chunkTooLarge, .captureExhausted, .captureDiffers: .protocolError
        case .captureUnreadable: .invalidInput
        case .characteristicMissing, .noProtocolV1, .noSecondChannel, .noCharacteristic: .notSupported
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

/// The second write/notify pair of an in-process peripheral (a ring's big-data service), as a
/// loopback link offers it. Connected right after the first pair; `send` delivers one
/// notification of the second pair to the central.
public protocol SecondChannelEndpoint: Sendable {
    func centralConnectedSecondChannel(send: @escaping @Sendable ([UInt8]) async -> Void) async
    func centralWroteSecondChannel(_ chunk: [UInt8]) async
}

/// Characteristics of an in-process peripheral addressed by service and UUID (a band's auth, fetch and data characteristics),
/// as a loopback link offers them. `notify` delivers one notification of a characteristic to the
/// central; the link's faults apply to these writes and notifications as to the first pair's.
public protocol CharacteristicsEndpoint: Sendable {
    var characteristics: Set<GATTCharacteristicID> { get }
    func centralConnected(notify: @escaping @Sendable (GATTCharacteristicID, [UInt8]) async -> Void) async
    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8]
    func centralWrote(_ value: [UInt8], to characteristic: GATTCharacteristicID) async throws
    func centralDisconnected() async
}

/// The standard GATT services of an in-process peripheral (the simulator's Device
/// Information, Battery and Heart Rate), as a loopback link offers them.
public protocol StandardServicesEndpoint: Sendable {
    var standardCharacteristics: Set<StandardCharacteristic> { get }
    func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8]
    func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws
    func notifications(of characteristic: StandardCharacteristic) async -> AsyncStream<[UInt8]>
}

extension Set<StandardCharacteristic> {
    /// The standard services these characteristics belong to.
    public var services: Set<WatchService> { Set<WatchService>(self.map { $0.service }) }
}
