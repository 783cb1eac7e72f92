import TSGATT
import TSModels
import TSSnoop

/// One dialect's exchange in an HCI capture (btsnoop): the ATT writes to its write
/// characteristics and the notifications of its notify characteristics, on both of its pairs,
/// per connection, in order. Handles come from the GATT discovery in the capture; a capture
/// without one (BlueZ caches the attribute database of a paired watch) falls back to the handles
/// whose values carry frames the dialect's decoder accepts. Knows no dialect: the profile and
/// the decoder are the dialect registration's. Converts to the `CaptureEntry` format
/// `ReplayTransport` plays.
public struct CapturedExchange: Sendable {
    public enum HandleSource: String, Sendable { case discovery, frames }

    public struct Value: Sendable, Hashable {
        public var connection: ConnectionKey
        public var unixMicroseconds: Int64
        public var direction: CaptureEntry.Direction
        public var channel: CaptureChannel
        public var bytes: [UInt8]

        public var flow: CaptureFlow { direction == .notification ? .notification : .write }
    }

    /// Central → watch values and watch → central values, in capture order.
    public private(set) var values: [Value] = []
    /// The connections decoded, in capture order; ends where the capture saw a disconnection.
    public private(set) var connections: [ConnectionKey] = []
    public private(set) var writeHandles: Set<UInt16> = []
    public private(set) var notifyHandles: Set<UInt16> = []
    public private(set) var handleSource: HandleSource = .discovery
    public let profile: GATTProfile
    public let traffic: ATTTraffic

    /// The exchange of the dialect whose profile and decoder are given.
    public init(traffic: ATTTraffic, profile: GATTProfile, decoder: any CaptureDecoder) {
        self.traffic = traffic
        self.profile = profile
        let roles = CapturedExchange.roles(of: profile)
        let discovery = GATTDiscovery(operations: traffic.operations, service: profile.service, characteristics: roles.map(\.uuid))
        // Which (connection, handle) pairs carry the exchange: discovered handles apply to every
        // link with the discovering link's peer (BlueZ caches a paired watch's attributes and
        // does not discover again); without a discovery, the handles that carry valid frames.
        var streams: [Stream: CaptureChannel] = [:]
        if !discovery.characteristics.isEmpty {
            let byPeer = Dictionary(grouping: discovery.characteristics.keys) { traffic.connections[$0]?.peer }
            for operation in traffic.operations {
                let peer = traffic.connections[operation.connection]?.peer
                let sources = peer.flatMap { byPeer[$0] } ?? [operation.connection]
                let flow: CaptureFlow = operation.isNotification ? .notification : .write
                for (handle, _) in operation.handleValues {
                    for role in roles where role.flow == flow
                    && sources.contains(where: { discovery.characteristics[$0]?[role.uuid]?.contains(handle) == true }) {
                        streams[Stream(connection: operation.connection, handle: handle, notification: operation.isNotification)] = role.channel
                    }
                }
            }
        }
        if streams.isEmpty {
            handleSource = .frames
            streams = CapturedExchange.streamsCarryingFrames(traffic.operations, decoder: decoder, channels: roles.map(\.channel))
        }
        writeHandles = Set(streams.keys.filter { !$0.notification }.map(\.handle))
        notifyHandles = Set(streams.keys.filter(\.notification).map(\.handle))
        var candidates: [Value] = []
        for operation in traffic.operations {
            let notification = operation.isNotification
            for (handle, value) in operation.handleValues {
                guard let channel = streams[Stream(connection: operation.connection, handle: handle, notification: notification)] else { continue }
                candidates.append(Value(connection: operation.connection, unixMicroseconds: operation.unixMicroseconds,
                                        direction: notification ? .notification : .write, channel: channel, bytes: value))
            }
        }
        // One link seen from both controllers (two adapters in one machine, as with btvirt)
        // appears twice: keep the first controller that carries the exchange.
        guard let index = candidates.first?.connection.index else { return }
        values = candidates.filter { $0.connection.index == index }
        for value in values where !connections.contains(value.connection) { connections.append(value.connection) }
    }

    struct Stream: Hashable { var connection: ConnectionKey; var handle: UInt16; var notification: Bool }
    struct Role { var uuid: String; var channel: CaptureChannel; var flow: CaptureFlow }

    /// The characteristics of a profile and the pair and direction each carries.
    static func roles(of profile: GATTProfile) -> [Role] {
        var roles = [Role(uuid: profile.writeCharacteristic.lowercased(), channel: .main, flow: .write),
                     Role(uuid: profile.notifyCharacteristic.lowercased(), channel: .main, flow: .notification)]
        if let second = profile.secondChannel {
            roles += [Role(uuid: second.writeCharacteristic.lowercased(), channel: .second, flow: .write),
                      Role(uuid: second.notifyCharacteristic.lowercased(), channel: .second, flow: .notification)]
        }
        return roles
    }

    /// Whether the capture's GATT discovery found the profile's service (on any connection).
    public var discoveredService: Bool {
        !GATTDiscovery(operations: traffic.operations, service: profile.service, characteristics: []).services.isEmpty
    }

    /// How many values went over the profile's second pair.
    public var secondChannelValues: Int { values.filter { $0.channel == .second }.count }

    /// Seconds between two of the capture's times. Its timestamps are whatever its writer put
    /// there, so the difference may not fit 64 bits.
    public static func seconds(from start: Int64, to time: Int64) -> Double {
        let (difference, overflow) = time.subtractingReportingOverflow(start)
        return (overflow ? Double(time) - Double(start) : Double(difference)) / 1_000_000
    }

    /// The ATT traffic of a btsnoop file's bytes.
    public static func traffic(btsnoop bytes: [UInt8]) throws(BTSnoopError) -> ATTTraffic {
        ATTTraffic(packets: HCIPacket.packets(of: try BTSnoop.decode(bytes)))
    }

    /// The exchange as a replayable capture: per connection an `open` with its ATT MTU (the
    /// exchanged one, else the smallest that fits the largest value), its values on their pairs,
    /// and a `disconnected` where the capture saw the link end. Times are seconds since the first value.
    public var captureEntries: [CaptureEntry] {
        guard let first = values.first?.unixMicroseconds else { return [] }
        let seconds = { (time: Int64) in CapturedExchange.seconds(from: first, to: time) }
        var entries: [CaptureEntry] = []
        for connection in connections {
            let mine = values.filter { $0.connection == connection }
            let largest = mine.map(\.bytes.count).max() ?? 0
            let mtu = min(max(traffic.connections[connection]?.mtu ?? (largest + 3), ATTMTU.minimum), ATTMTU.maximum)
            var opened = CaptureEntry(time: seconds(mine.first?.unixMicroseconds ?? first), direction: .open, bytes: [], mtu: mtu)
            if profile.secondChannel != nil, values.contains(where: { $0.channel == .second }) { opened.secondChannel = true }
            entries.append(opened)
            for value in mine {
                entries.append(CaptureEntry(time: seconds(value.unixMicroseconds), direction: value.direction, bytes: value.bytes, channel: value.channel))
            }
            if let end = traffic.connections[connection]?.disconnectedAt {
                entries.append(CaptureEntry(time: seconds(max(end, first)), direction: .disconnected, bytes: []))
            }
        }
        return entries
    }

    /// The (connection, handle, direction) streams whose values, concatenated, hold at least
    /// one frame the decoder accepts, with the first of the profile's pairs that accepts it.
    static func streamsCarryingFrames(_ operations: [ATTTraffic.Operation], decoder: any CaptureDecoder,
                                      channels: [CaptureChannel]) -> [Stream: CaptureChannel] {
        var collected: [Stream: [[UInt8]]] = [:]
        var order: [Stream] = []
        for operation in operations {
            for (handle, value) in operation.handleValues {
                let stream = Stream(connection: operation.connection, handle: handle, notification: operation.isNotification)
                if collected[stream] == nil { order.append(stream) }
                collected[stream, default: []].append(value)
            }
        }
        var found: [Stream: CaptureChannel] = [:]
        for stream in order {
            let flow: CaptureFlow = stream.notification ? .notification : .write
            for channel in Set(channels).sorted(by: { $0.rawValue < $1.rawValue })
            where decoder.frameCount(collected[stream] ?? [], channel: channel, flow: flow) > 0 {
                found[stream] = channel
                break
            }
        }
        return found
    }
}
