import TSModels

/// The ATT side of a capture: ACL fragments reassembled into L2CAP PDUs, the fixed ATT channel
/// (CID 4) and the Enhanced ATT channels (LE credit-based channels on PSM 0x0027, SDUs reassembled
/// from their K-frames), and per connection the ATT MTU, the peer and the end. Pure: packets in,
/// operations out. Malformed packets are skipped, never trusted.
public struct ATTTraffic: Sendable {
    public struct Operation: Sendable, Hashable {
        public var connection: ConnectionKey
        public var unixMicroseconds: Int64
        /// True when the capturing host sent it (ACL TX), false when it was received.
        public var sent: Bool
        /// The L2CAP channel: 4 for ATT, a dynamic CID for EATT.
        public var channel: UInt16
        /// The whole ATT PDU, opcode first.
        public var pdu: [UInt8]

        public var opcode: UInt8 { pdu.first ?? 0 }

        /// True for Handle Value Notification (0x1B) and Multiple Handle Value Notification (0x23).
        public var isNotification: Bool { opcode == ATTOpcode.notification || opcode == ATTOpcode.multipleNotification }

        /// Handles and values of a Write Request (0x12), Write Command (0x52), Handle Value
        /// Notification (0x1B), or each entry of a Multiple Handle Value Notification (0x23,
        /// which bluetoothd 5.66 sends to clients that announce support); empty for other PDUs. A truncated entry ends the list.
        public var handleValues: [(handle: UInt16, value: [UInt8])] {
            switch opcode {
            case ATTOpcode.writeRequest, ATTOpcode.writeCommand, ATTOpcode.notification:
                guard pdu.count >= 3 else { return [] }
                return [(pdu.littleEndianUInt16(at: 1), Array(pdu[3...]))]
            case ATTOpcode.multipleNotification:
                var entries: [(handle: UInt16, value: [UInt8])] = []
                var offset = 1
                while pdu.count - offset >= 4 {
                    let length = Int(pdu.littleEndianUInt16(at: offset + 2))
                    guard pdu.count - offset - 4 >= length else { break }
                    entries.append((pdu.littleEndianUInt16(at: offset), Array(pdu[offset + 4..<offset + 4 + length])))
                    offset += 4 + length
                }
                return entries
            default:
                return []
            }
        }
    }

    public struct Connection: Sendable, Hashable {
        public var peer: BluetoothAddress?
        /// The ATT MTU agreed by Exchange MTU (the smaller of the two), or an EATT channel's.
        public var mtu: Int?
        /// Connection interval in 1.25 ms units, from the last Connection (Update) Complete.
        public var interval: UInt16?
        public var connectedAt: Int64?
        public var disconnectedAt: Int64?
        /// The HCI reason of the disconnection (0x16: the capturing host, the central, ended it).
        public var disconnectReason: UInt8?
        /// The capturing host sent HCI Disconnect for the link: the central ended it, whatever
        /// reason the controller reports back (a real one says 0x16; btvirt echoes the command's 0x13).
        public var disconnectAskedByHost = false

        /// The capturing host, the central, ended the link.
        public var endedByHost: Bool { disconnectAskedByHost || disconnectReason == 0x16 }
    }

    public private(set) var operations: [Operation] = []
    public private(set) var connections: [ConnectionKey: Connection] = [:]

    private struct Direction: Hashable { var connection: ConnectionKey; var sent: Bool }
    private struct Channel: Hashable { var direction: Direction; var cid: UInt16 }
    private var aclPending: [Direction: [UInt8]] = [:]
    private var sduPending: [Channel: (length: Int, bytes: [UInt8])] = [:]
    private var eattChannels: Set<ConnectionKey.Channel> = []
    /// Credit-based connection requests on PSM 0x0027 awaiting their response: identifier → MTU.
    private var eattRequests: [SignalKey: UInt16] = [:]
    private var clientMTU: [Direction: UInt16] = [:]

    private struct SignalKey: Hashable { var connection: ConnectionKey; var identifier: UInt8 }
    private struct HandleKey: Hashable { var index: UInt16; var handle: UInt16 }
    /// The link each controller handle carries now (`ConnectionKey.link`).
    private var currentLinks: [HandleKey: Int] = [:]

    private func linkKey(index: UInt16, handle: UInt16) -> ConnectionKey {
        ConnectionKey(index: index, handle: handle, link: currentLinks[HandleKey(index: index, handle: handle)] ?? 0)
    }

    public init() {}

    public init(packets: [HCIPacket]) {
        self.init()
        for packet in packets { add(packet) }
    }

    public mutating func add(_ packet: HCIPacket) {
        switch packet.kind {
        case .event: addEvent(packet)
        case .command: addCommand(packet)
        case .aclTX: addACL(packet, sent: true)
        case .aclRX: addACL(packet, sent: false)
        case .deleteIndex:
            for key in connections.keys where key.index == packet.index && connections[key]?.disconnectedAt == nil {
                connections[key]?.disconnectedAt = packet.unixMicroseconds
            }
        default: break
        }
    }

    private mutating func addEvent(_ packet: HCIPacket) {
        switch HCIEvent(packet: packet.data) {
        case let .leConnectionComplete(status, handle, _, peer, interval, _, _) where status == 0:
            // A handle that carried a link before carries a new one now.
            if connections.keys.contains(linkKey(index: packet.index, handle: handle)) {
                currentLinks[HandleKey(index: packet.index, handle: handle), default: 0] += 1
            }
            let key = linkKey(index: packet.index, handle: handle)
            forget(key)
            connections[key] = Connection(peer: peer, mtu: nil, interval: interval, connectedAt: packet.unixMicroseconds)
        case let .leConnectionUpdateComplete(status, handle, interval, _, _) where status == 0:
            connections[linkKey(index: packet.index, handle: handle), default: Connection()].interval = interval
        case let .disconnectionComplete(status, handle, reason) where status == 0:
            let key = linkKey(index: packet.index, handle: handle)
            connections[key, default: Connection()].disconnectedAt = packet.unixMicroseconds
            connections[key]?.disconnectReason = reason
            forget(key)
        default: break
        }
    }

    /// HCI Disconnect (OGF 0x01, OCF 0x0006: handle, reason): the host ends the link.
    private mutating func addCommand(_ packet: HCIPacket) {
        let data = packet.data
        guard data.count >= 6, data.littleEndianUInt16(at: 0) == 0x0406 else { return }
        let key = linkKey(index: packet.index, handle: data.littleEndianUInt16(at: 3) & 0x0FFF)
        if connections[key] != nil, connections[key]?.disconnectedAt == nil { connections[key]?.disconnectAskedByHost = true }
    }

    /// A handle is reused after a disconnection: drop what belonged to the old link.
    private mutating func forget(_ key: ConnectionKey) {
        for sent in [true, false] {
            aclPending[Direction(connection: key, sent: sent)] = nil
            clientMTU[Direction(connection: key, sent: sent)] = nil
        }
        sduPending = sduPending.filter { $0.key.direction.connection != key }
        eattChannels = eattChannels.filter { $0.connection != key }
    }

    private mutating func addACL(_ packet: HCIPacket, sent: Bool) {
        let data = packet.data
        guard data.count >= 4 else { return }
        let word = data.littleEndianUInt16(at: 0)
        let key = linkKey(index: packet.index, handle: word & 0x0FFF)
        let boundary = word >> 12 & 0x3
        let length = Int(data.littleEndianUInt16(at: 2))
        let fragment = data.dropFirst(4).prefix(length)
        let direction = Direction(connection: key, sent: sent)
        if connections[key] == nil { connections[key] = Connection() }
        var buffer: [UInt8]
        if boundary == 0x1 {
            guard let pending = aclPending[direction] else { return }  // a continuation without a start
            buffer = pending + fragment
        } else {
            buffer = Array(fragment)
        }
        guard buffer.count >= 4 else { aclPending[direction] = buffer; return }
        let pduLength = Int(buffer.littleEndianUInt16(at: 0))
        guard buffer.count >= 4 + pduLength else { aclPending[direction] = buffer; return }
        aclPending[direction] = nil
        let cid = buffer.littleEndianUInt16(at: 2)
        let payload = Array(buffer[4..<4 + pduLength])
        switch cid {
        case 0x0004: addATT(payload, direction: direction, channel: cid, time: packet.unixMicroseconds)
        case 0x0005: addSignal(payload, connection: key)
        default:
            if eattChannels.contains(ConnectionKey.Channel(connection: key, cid: cid)) {
                addKFrame(payload, channel: Channel(direction: direction, cid: cid), time: packet.unixMicroseconds)
            }
        }
    }

    /// LE signaling: L2CAP LE Credit Based Connection Request/Response (codes 0x14/0x15, one
    /// channel, what Linux 6.1 and BlueZ 5.66 use) and Credit Based Connection Request/Response
    /// (0x17/0x18, up to five channels) for the EATT PSM mark their channels as ATT bearers.
    private mutating func addSignal(_ payload: [UInt8], connection: ConnectionKey) {
        var offset = 0
        while payload.count - offset >= 4 {
            let code = payload[offset], identifier = payload[offset + 1]
            let length = Int(payload.littleEndianUInt16(at: offset + 2))
            guard payload.count - offset - 4 >= length else { return }
            let body = Array(payload[offset + 4..<offset + 4 + length])
            let signal = SignalKey(connection: connection, identifier: identifier)
            if code == 0x14, body.count >= 10, body.littleEndianUInt16(at: 0) == 0x0027 {
                // LE Credit Based Connection Request (one channel): PSM, source CID, MTU, MPS, credits.
                eattRequests[signal] = body.littleEndianUInt16(at: 4)
                markEATT(cids: Array(body[2..<4]), connection: connection)
            } else if code == 0x15, body.count >= 10, let requestMTU = eattRequests.removeValue(forKey: signal) {
                // Its response: destination CID, MTU, MPS, credits, result.
                if body.littleEndianUInt16(at: 8) == 0 {
                    markEATT(cids: Array(body[0..<2]), connection: connection)
                    let mtu = Int(min(requestMTU, body.littleEndianUInt16(at: 2)))
                    connections[connection, default: Connection()].mtu = max(connections[connection]?.mtu ?? 0, mtu)
                }
            } else if code == 0x17, body.count >= 8, body.littleEndianUInt16(at: 0) == 0x0027 {
                eattRequests[signal] = body.littleEndianUInt16(at: 2)
                markEATT(cids: Array(body[8...]), connection: connection)
            } else if code == 0x18, body.count >= 8, let requestMTU = eattRequests.removeValue(forKey: signal) {
                markEATT(cids: Array(body[8...]), connection: connection)
                let mtu = Int(min(requestMTU, body.littleEndianUInt16(at: 0)))
                connections[connection, default: Connection()].mtu = max(connections[connection]?.mtu ?? 0, mtu)
            }
            offset += 4 + length
        }
    }

    private mutating func markEATT(cids bytes: [UInt8], connection: ConnectionKey) {
        for start in stride(from: 0, to: bytes.count - 1, by: 2) {
            let cid = bytes.littleEndianUInt16(at: start)
            if cid != 0 { eattChannels.insert(ConnectionKey.Channel(connection: connection, cid: cid)) }
        }
    }

    /// A K-frame: the first of an SDU starts with the SDU's 2-byte length.
    private mutating func addKFrame(_ payload: [UInt8], channel: Channel, time: Int64) {
        if var pending = sduPending[channel] {
            pending.bytes += payload
            sduPending[channel] = pending
        } else {
            guard payload.count >= 2 else { return }
            sduPending[channel] = (Int(payload.littleEndianUInt16(at: 0)), Array(payload.dropFirst(2)))
        }
        guard let pending = sduPending[channel], pending.bytes.count >= pending.length else { return }
        sduPending[channel] = nil
        addATT(Array(pending.bytes.prefix(pending.length)), direction: channel.direction, channel: channel.cid, time: time)
    }

    private mutating func addATT(_ pdu: [UInt8], direction: Direction, channel: UInt16, time: Int64) {
        guard let opcode = pdu.first else { return }
        if (opcode == ATTOpcode.exchangeMTURequest || opcode == ATTOpcode.exchangeMTUResponse), pdu.count >= 3 {
            let value = pdu.littleEndianUInt16(at: 1)
            if opcode == ATTOpcode.exchangeMTURequest {
                clientMTU[direction] = value
            } else if let client = clientMTU[Direction(connection: direction.connection, sent: !direction.sent)] {
                connections[direction.connection, default: Connection()].mtu = Int(min(client, value))
            }
        }
        operations.append(Operation(connection: direction.connection, unixMicroseconds: time, sent: direction.sent, channel: channel, pdu: pdu))
    }
}

extension ConnectionKey {
    struct Channel: Hashable { var connection: ConnectionKey; var cid: UInt16 }
}

/// The ATT opcodes this project reads (Bluetooth Core, Vol 3 Part F 3.4.8).
public enum ATTOpcode {
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationResponse: UInt8 = 0x05
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let notification: UInt8 = 0x1B
    public static let multipleNotification: UInt8 = 0x23
    public static let writeCommand: UInt8 = 0x52
}

/// Handles learned from GATT discovery in a capture: service ranges from Read By Group Type
/// responses, characteristic value handles from Read By Type responses (characteristic
/// declarations) and Find Information responses.
public struct GATTDiscovery: Sendable, Hashable {
    public var services: [ConnectionKey: [ClosedRange<UInt16>]] = [:]
    /// Characteristic UUID (lower-case text) → value handles, per connection.
    public var characteristics: [ConnectionKey: [String: Set<UInt16>]] = [:]

    /// Follows the discovery responses in `operations` for a service and its characteristics,
    /// 128-bit UUIDs and the Bluetooth SIG's 16-bit ones alike.
    public init(operations: [ATTTraffic.Operation], service: String, characteristics wanted: [String]) {
        let serviceBytes = GATTDiscovery.attBytes(service)
        let wantedBytes = wanted.compactMap { uuid in GATTDiscovery.attBytes(uuid).map { (uuid.lowercased(), $0) } }
        for operation in operations {
            let pdu = operation.pdu
            let key = operation.connection
            switch operation.opcode {
            case ATTOpcode.readByGroupTypeResponse:
                guard pdu.count >= 2, let serviceBytes else { continue }
                let size = Int(pdu[1])
                guard size == 4 + serviceBytes.count else { continue }
                for entry in GATTDiscovery.entries(Array(pdu[2...]), size: size) where Array(entry[4..<size]) == serviceBytes {
                    let start = entry.littleEndianUInt16(at: 0), end = entry.littleEndianUInt16(at: 2)
                    if start <= end { services[key, default: []].append(start...end) }
                }
            case ATTOpcode.readByTypeResponse:
                guard pdu.count >= 2 else { continue }
                let size = Int(pdu[1])
                guard size == 21 || size == 7 else { continue }  // handle, properties, value handle, 128- or 16-bit UUID
                for entry in GATTDiscovery.entries(Array(pdu[2...]), size: size) {
                    for (uuid, bytes) in wantedBytes where bytes.count == size - 5 && Array(entry[5..<size]) == bytes {
                        characteristics[key, default: [:]][uuid, default: []].insert(entry.littleEndianUInt16(at: 3))
                    }
                }
            case ATTOpcode.findInformationResponse:
                guard pdu.count >= 2, pdu[1] == 0x01 || pdu[1] == 0x02 else { continue }  // format 1: 16-bit UUIDs, 2: 128-bit
                let size = pdu[1] == 0x02 ? 18 : 4
                for entry in GATTDiscovery.entries(Array(pdu[2...]), size: size) {
                    for (uuid, bytes) in wantedBytes where bytes.count == size - 2 && Array(entry[2..<size]) == bytes {
                        characteristics[key, default: [:]][uuid, default: []].insert(entry.littleEndianUInt16(at: 0))
                    }
                }
            default: continue
            }
        }
    }

    /// Value handles of a characteristic over all connections.
    public func handles(of characteristic: String) -> Set<UInt16> {
        characteristics.values.reduce(into: []) { $0.formUnion($1[characteristic.lowercased()] ?? []) }
    }

    private static func entries(_ bytes: [UInt8], size: Int) -> [[UInt8]] {
        guard size > 0 else { return [] }
        return stride(from: 0, through: bytes.count - size, by: size).map { Array(bytes[$0..<$0 + size]) }
    }

    /// A UUID as ATT carries it: a SIG UUID on the Bluetooth Base UUID in its two bytes, any
    /// other in its 16 (least significant first); nil if not a UUID.
    static func attBytes(_ text: String) -> [UInt8]? {
        guard let bytes = littleEndianUUID(text) else { return nil }
        let base: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00]
        if Array(bytes[0..<12]) == base, bytes[14] == 0, bytes[15] == 0 { return [bytes[12], bytes[13]] }
        return bytes
    }

    /// A UUID's 16 bytes as ATT carries them (least significant first), or nil if not a UUID.
    static func littleEndianUUID(_ text: String) -> [UInt8]? {
        let digits = Array(text.filter { $0 != "-" }.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[start..<start + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes.reversed()
    }
}
