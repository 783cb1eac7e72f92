import TSProtocol
import TSSnoop

/// The watch-service exchange in an HCI capture (btsnoop): the ATT writes to the write
/// characteristic and the notifications of the notify characteristic, per connection, in
/// order. Handles come from the GATT discovery in the capture; a capture without one (BlueZ
/// caches the attribute database of a paired watch) falls back to the handles whose values
/// carry valid protocol-v1 frames. Converts to the `CaptureEntry` format `ReplayTransport` plays.
public struct CapturedExchange: Sendable {
    public enum HandleSource: String, Sendable { case discovery, frames }

    public struct Value: Sendable, Hashable {
        public var connection: ConnectionKey
        public var unixMicroseconds: Int64
        public var direction: CaptureEntry.Direction
        public var bytes: [UInt8]
    }

    /// Central → watch values and watch → central values, in capture order.
    public private(set) var values: [Value] = []
    /// The connections decoded, in capture order; ends where the capture saw a disconnection.
    public private(set) var connections: [ConnectionKey] = []
    public private(set) var writeHandles: Set<UInt16> = []
    public private(set) var notifyHandles: Set<UInt16> = []
    public private(set) var handleSource: HandleSource = .discovery
    public let traffic: ATTTraffic

    public init(traffic: ATTTraffic) {
        self.traffic = traffic
        let discovery = GATTDiscovery(
            operations: traffic.operations, service: WatchGATT.service,
            characteristics: [WatchGATT.writeCharacteristic, WatchGATT.notifyCharacteristic])
        // Which (connection, handle) pairs carry the exchange: discovered handles apply to every
        // link with the discovering link's peer (BlueZ caches a paired watch's attributes and
        // does not discover again); without a discovery, the handles that carry valid frames.
        var streams: Set<Stream> = []
        if !discovery.characteristics.isEmpty {
            let byPeer = Dictionary(grouping: discovery.characteristics.keys) { traffic.connections[$0]?.peer }
            for operation in traffic.operations {
                let peer = traffic.connections[operation.connection]?.peer
                let sources = peer.flatMap { byPeer[$0] } ?? [operation.connection]
                let characteristic = operation.isNotification ? WatchGATT.notifyCharacteristic : WatchGATT.writeCharacteristic
                for (handle, _) in operation.handleValues
                where sources.contains(where: { discovery.characteristics[$0]?[characteristic]?.contains(handle) == true }) {
                    streams.insert(Stream(connection: operation.connection, handle: handle, notification: operation.isNotification))
                }
            }
        }
        if streams.isEmpty {
            handleSource = .frames
            streams = CapturedExchange.streamsCarryingFrames(traffic.operations)
        }
        writeHandles = Set(streams.filter { !$0.notification }.map(\.handle))
        notifyHandles = Set(streams.filter(\.notification).map(\.handle))
        var candidates: [Value] = []
        for operation in traffic.operations {
            let notification = operation.isNotification
            for (handle, value) in operation.handleValues
            where streams.contains(Stream(connection: operation.connection, handle: handle, notification: notification)) {
                candidates.append(Value(connection: operation.connection, unixMicroseconds: operation.unixMicroseconds, direction: notification ? .notification : .write, bytes: value))
            }
        }
        // One link seen from both controllers (two adapters in one machine, as with btvirt)
        // appears twice: keep the first controller that carries the exchange.
        guard let index = candidates.first?.connection.index else { return }
        values = candidates.filter { $0.connection.index == index }
        for value in values where !connections.contains(value.connection) { connections.append(value.connection) }
    }

    struct Stream: Hashable { var connection: ConnectionKey; var handle: UInt16; var notification: Bool }

    /// Seconds between two of the capture's times. Its timestamps are whatever its writer put
    /// there, so the difference may not fit 64 bits.
    public static func seconds(from start: Int64, to time: Int64) -> Double {
        let (difference, overflow) = time.subtractingReportingOverflow(start)
        return (overflow ? Double(time) - Double(start) : Double(difference)) / 1_000_000
    }

    /// Convenience: the exchange in a btsnoop file's bytes.
    public init(btsnoop bytes: [UInt8]) throws(BTSnoopError) {
        self.init(traffic: ATTTraffic(packets: HCIPacket.packets(of: try BTSnoop.decode(bytes))))
    }

    /// The exchange as a replayable capture: per connection an `open` with its ATT MTU (the
    /// exchanged one, else the smallest that fits the largest value), its values, and a
    /// `disconnected` where the capture saw the link end. Times are seconds since the first value.
    public var captureEntries: [CaptureEntry] {
        guard let first = values.first?.unixMicroseconds else { return [] }
        let seconds = { (time: Int64) in CapturedExchange.seconds(from: first, to: time) }
        var entries: [CaptureEntry] = []
        for connection in connections {
            let mine = values.filter { $0.connection == connection }
            let largest = mine.map(\.bytes.count).max() ?? 0
            let mtu = min(max(traffic.connections[connection]?.mtu ?? (largest + 3), ATTMTU.minimum), ATTMTU.maximum)
            entries.append(CaptureEntry(time: seconds(mine.first?.unixMicroseconds ?? first), direction: .open, bytes: [], mtu: mtu))
            for value in mine { entries.append(CaptureEntry(time: seconds(value.unixMicroseconds), direction: value.direction, bytes: value.bytes)) }
            if let end = traffic.connections[connection]?.disconnectedAt {
                entries.append(CaptureEntry(time: seconds(max(end, first)), direction: .disconnected, bytes: []))
            }
        }
        return entries
    }

    /// The (connection, handle, direction) streams whose values, concatenated, hold at least
    /// one frame with a valid CRC.
    static func streamsCarryingFrames(_ operations: [ATTTraffic.Operation]) -> Set<Stream> {
        var reassemblers: [Stream: FrameReassembler] = [:]
        var found: Set<Stream> = []
        for operation in operations {
            for (handle, value) in operation.handleValues {
                let stream = Stream(connection: operation.connection, handle: handle, notification: operation.isNotification)
                guard !found.contains(stream) else { continue }
                var reassembler = reassemblers[stream] ?? FrameReassembler()
                let events = reassembler.append(value, at: .zero)
                reassemblers[stream] = reassembler
                if events.contains(where: { if case .frame = $0 { true } else { false } }) { found.insert(stream) }
            }
        }
        return found
    }
}
