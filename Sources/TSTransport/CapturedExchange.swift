import TSGATT
import TSModels
import TSSnoop

/// One dialect's exchange in an HCI capture (btsnoop): the ATT writes to its write
/// characteristics and the notifications of its notify characteristics, on both of its pairs,
/// and the writes, notifications and reads of the characteristics its profile names by service
/// and UUID, per connection, in order. Handles come from the GATT discovery in the capture; a
/// capture without one (BlueZ caches the attribute database of a paired watch) falls back to the
/// handles whose values carry frames the dialect's decoder accepts. Knows no dialect: the profile
/// and the decoder are the dialect registration's. Converts to the `CaptureEntry` format
/// `ReplayTransport` plays, with the name the peripheral gave (its GAP Device Name, when the
/// capture holds a read of it).
public struct CapturedExchange: Sendable {
    public enum HandleSource: String, Sendable { case discovery, frames }

    public struct Value: Sendable, Hashable {
        public var connection: ConnectionKey
        public var unixMicroseconds: Int64
        public var direction: CaptureEntry.Direction
        public var channel: CaptureChannel
        public var bytes: [UInt8]

        public var flow: CaptureFlow {
            switch direction {
            case .notification: .notification
            case .read: .read
            default: .write
            }
        }
    }

    /// Central → watch values and watch → central values, in capture order.
    public private(set) var values: [Value] = []
    /// The connections decoded, in capture order; ends where the capture saw a disconnection.
    public private(set) var connections: [ConnectionKey] = []
    public private(set) var writeHandles: Set<UInt16> = []
    public private(set) var notifyHandles: Set<UInt16> = []
    public private(set) var handleSource: HandleSource = .discovery
    /// The GAP Device Name the capture shows the central reading, per connection.
    public private(set) var peripheralNames: [ConnectionKey: String] = [:]
    /// The profile's characteristics (addressed by service and UUID) the capture's GATT discovery found.
    public private(set) var discoveredCharacteristics: Set<CaptureChannel> = []
    public let profile: GATTProfile
    public let traffic: ATTTraffic

    /// The exchange of the dialect whose profile and decoder are given.
    public init(traffic: ATTTraffic, profile: GATTProfile, decoder: any CaptureDecoder) {
        self.traffic = traffic
        self.profile = profile
        let roles = CapturedExchange.roles(of: profile)
        let discovery = GATTDiscovery(operations: traffic.operations, service: profile.service,
                                      characteristics: roles.map(\.uuid) + [CapturedExchange.deviceName])
        let carried = CapturedExchange.handleValues(traffic.operations)
        for role in roles where role.channel.characteristic != nil && !discovery.handles(of: role.uuid).isEmpty {
            discoveredCharacteristics.insert(role.channel)
        }
        // Which (connection, handle) pairs carry the exchange: discovered handles apply to every
        // link with the discovering link's peer (BlueZ caches a paired watch's attributes and
        // does not discover again); without a discovery, the handles that carry valid frames.
        var streams: [Stream: CaptureChannel] = [:]
        if !discovery.characteristics.isEmpty {
            let byPeer = Dictionary(grouping: discovery.characteristics.keys) { traffic.connections[$0]?.peer }
            for carrier in carried {
                let peer = traffic.connections[carrier.connection]?.peer
                let sources = peer.flatMap { byPeer[$0] } ?? [carrier.connection]
                let handled = { (uuid: String) in sources.contains(where: { discovery.characteristics[$0]?[uuid]?.contains(carrier.handle) == true }) }
                for role in roles where role.flow == carrier.flow && handled(role.uuid) {
                    streams[Stream(connection: carrier.connection, handle: carrier.handle, flow: carrier.flow)] = role.channel
                }
                if carrier.flow == .read, handled(CapturedExchange.deviceName), peripheralNames[carrier.connection] == nil {
                    peripheralNames[carrier.connection] = String(decoding: carrier.value, as: UTF8.self)
                }
            }
        }
        if streams.isEmpty {
            handleSource = .frames
            streams = CapturedExchange.streamsCarryingFrames(carried, decoder: decoder, channels: roles.map(\.channel))
        }
        writeHandles = Set(streams.keys.filter { $0.flow == .write }.map(\.handle))
        notifyHandles = Set(streams.keys.filter { $0.flow != .write }.map(\.handle))
        var candidates: [Value] = []
        for carrier in carried {
            guard let channel = streams[Stream(connection: carrier.connection, handle: carrier.handle, flow: carrier.flow)] else { continue }
            let direction: CaptureEntry.Direction = carrier.flow == .write ? .write : carrier.flow == .read ? .read : .notification
            candidates.append(Value(connection: carrier.connection, unixMicroseconds: carrier.unixMicroseconds,
                                    direction: direction, channel: channel, bytes: carrier.value))
        }
        // One link seen from both controllers (two adapters in one machine, as with btvirt)
        // appears twice: keep the first controller that carries the exchange.
        guard let index = candidates.first?.connection.index else { return }
        values = candidates.filter { $0.connection.index == index }
        for value in values where !connections.contains(value.connection) { connections.append(value.connection) }
    }

    struct Stream: Hashable { var connection: ConnectionKey; var handle: UInt16; var flow: CaptureFlow }
    struct Role { var uuid: String; var channel: CaptureChannel; var flow: CaptureFlow }

    /// GAP Device Name (`2A00`): what the peripheral calls itself, which some dialects' centrals
    /// go by (a band's model).
    static let deviceName = "00002a00-0000-1000-8000-00805f9b34fb"

    /// The characteristics of a profile and the channel and direction each carries: the pairs'
    /// writes and notifications, and the writes, notifications and reads of the characteristics
    /// the profile names.
    static func roles(of profile: GATTProfile) -> [Role] {
        var roles = [Role(uuid: profile.writeCharacteristic.lowercased(), channel: .main, flow: .write),
                     Role(uuid: profile.notifyCharacteristic.lowercased(), channel: .main, flow: .notification)]
        if let second = profile.secondChannel {
            roles += [Role(uuid: second.writeCharacteristic.lowercased(), channel: .second, flow: .write),
                      Role(uuid: second.notifyCharacteristic.lowercased(), channel: .second, flow: .notification)]
        }
        for characteristic in profile.characteristics {
            roles += [CaptureFlow.write, .notification, .read].map { Role(uuid: characteristic.uuid, channel: CaptureChannel(characteristic), flow: $0) }
        }
        return roles
    }

    /// One value a handle carried: a write, a notification, or the response to a read of it.
    struct Carried {
        var connection: ConnectionKey
        var unixMicroseconds: Int64
        var handle: UInt16
        var flow: CaptureFlow
        var value: [UInt8]
    }

    /// The values of writes, notifications and reads in capture order; a Read Response is paired
    /// with the Read Request before it on the same bearer (ATT allows one outstanding request).
    static func handleValues(_ operations: [ATTTraffic.Operation]) -> [Carried] {
        struct Bearer: Hashable { var connection: ConnectionKey; var channel: UInt16 }
        var reading: [Bearer: UInt16] = [:]
        var carried: [Carried] = []
        for operation in operations {
            let bearer = Bearer(connection: operation.connection, channel: operation.channel)
            switch operation.opcode {
            case CapturedExchange.readRequest where operation.sent && operation.pdu.count >= 3:
                reading[bearer] = UInt16(operation.pdu[1]) | UInt16(operation.pdu[2]) << 8
            case CapturedExchange.readResponse where !operation.sent:
                guard let handle = reading.removeValue(forKey: bearer) else { continue }
                carried.append(Carried(connection: operation.connection, unixMicroseconds: operation.unixMicroseconds, handle: handle,
                                       flow: .read, value: Array(operation.pdu.dropFirst())))
            case CapturedExchange.errorResponse where !operation.sent:
                reading[bearer] = nil
            default:
                let flow: CaptureFlow = operation.isNotification ? .notification : .write
                for (handle, value) in operation.handleValues {
                    carried.append(Carried(connection: operation.connection, unixMicroseconds: operation.unixMicroseconds, handle: handle,
                                           flow: flow, value: value))
                }
            }
        }
        return carried
    }

    static let errorResponse: UInt8 = 0x01
    static let readRequest: UInt8 = 0x0A
    static let readResponse: UInt8 = 0x0B

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
            // The characteristics the watch had: those of the profile's the discovery found or that carried a value.
            let addressed = discoveredCharacteristics.union(values.map(\.channel).filter { $0.characteristic != nil }).map(\.rawValue).sorted()
            if !addressed.isEmpty { opened.characteristics = addressed }
            opened.name = peripheralNames[connection] ?? peripheralNames.first { traffic.connections[$0.key]?.peer == traffic.connections[connection]?.peer }?.value
            entries.append(opened)
            for value in mine {
                entries.append(CaptureEntry(time: seconds(value.unixMicroseconds), direction: value.direction, bytes: value.bytes, channel: value.channel))
            }
            if let end = traffic.connections[connection]?.disconnectedAt {
                var ended = CaptureEntry(time: seconds(max(end, first)), direction: .disconnected, bytes: [])
                if traffic.connections[connection]?.endedByHost == true { ended.byCentral = true }
                entries.append(ended)
            }
        }
        return entries
    }

    /// The (connection, handle, direction) streams whose values, read as one stream, hold more
    /// frames that pass the decoder's checks than bytes that fail them, each with the channel
    /// whose checks the most frames pass (on a tie the first: the pairs, `main` then `second`,
    /// then the characteristics in the profile's order). Channels whose values carry no check of
    /// their own (`CaptureDecoder.identifiesHandles(of:)`) are not found this way.
    static func streamsCarryingFrames(_ carried: [Carried], decoder: any CaptureDecoder,
                                      channels: [CaptureChannel]) -> [Stream: CaptureChannel] {
        var collected: [Stream: [[UInt8]]] = [:]
        var order: [Stream] = []
        for carrier in carried {
            let stream = Stream(connection: carrier.connection, handle: carrier.handle, flow: carrier.flow)
            if collected[stream] == nil { order.append(stream) }
            collected[stream, default: []].append(carrier.value)
        }
        var unique: [CaptureChannel] = []
        for channel in channels where !unique.contains(channel) { unique.append(channel) }
        var found: [Stream: CaptureChannel] = [:]
        for stream in order {
            let flow = stream.flow
            // A read's handle is not in its value: without a discovery, reads are not followed.
            guard flow != .read else { continue }
            // The channel whose checks most of the stream's frames pass; a stream where as many
            // fail as pass carries another dialect's bytes that a few happen to pass.
            var best: (channel: CaptureChannel, passed: Int)?
            for channel in unique where decoder.identifiesHandles(of: channel) {
                let verdicts = decoder.verdicts(collected[stream] ?? [], channel: channel, flow: flow)
                guard verdicts.passed > verdicts.failed, verdicts.passed > best?.passed ?? 0 else { continue }
                best = (channel, verdicts.passed)
            }
            if let best { found[stream] = best.channel }
        }
        return found
    }
}
