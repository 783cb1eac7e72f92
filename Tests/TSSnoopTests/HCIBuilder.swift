import TSModels
import TSSnoop

/// Builds the HCI monitor packets of an LE link the way a controller and the kernel report them,
/// for tests: connection events, ACL fragments of L2CAP PDUs, ATT on CID 4 and on EATT channels.
struct HCIBuilder {
    var index: UInt16 = 0
    var handle: UInt16 = 0x0040
    var time: Int64 = 1_762_156_800_000_000
    /// ACL data length per fragment (27 is the LE default without Data Length Extension).
    var aclFragment = 27
    /// Microseconds from one packet to the next.
    var step: Int64 = 1250
    private(set) var packets: [HCIPacket] = []

    mutating func tick() -> Int64 { time += step; return time }

    mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        packets.append(HCIPacket(index: index, opcode: .event, data: [code, UInt8(parameters.count)] + parameters, unixMicroseconds: tick()))
    }

    mutating func newIndex(address: BluetoothAddress) {
        packets.append(HCIPacket(index: index, opcode: .newIndex, data: [0, 0] + address.littleEndian + Array("hci\(index)".utf8) + [0, 0, 0, 0], unixMicroseconds: tick()))
    }

    mutating func connectionComplete(peer: BluetoothAddress, enhanced: Bool = false) {
        let head: [UInt8] = [enhanced ? 0x0A : 0x01, 0x00] + le16(handle) + [0x00, 0x00] + peer.littleEndian
        let addresses: [UInt8] = enhanced ? [UInt8](repeating: 0, count: 12) : []
        event(0x3E, head + addresses + le16(24) + le16(0) + le16(42) + [0])
    }

    /// Reason 0x13: the peer ended the link; 0x16: this host (the central) did.
    mutating func disconnectionComplete(reason: UInt8 = 0x13) { event(0x05, [0x00] + le16(handle) + [reason]) }

    /// HCI Disconnect from this host: a real controller then completes it with reason 0x16, btvirt with the command's.
    mutating func disconnectCommand(reason: UInt8 = 0x13) {
        packets.append(HCIPacket(index: index, opcode: .command, data: le16(0x0406) + [3] + le16(handle) + [reason], unixMicroseconds: tick()))
    }

    /// One L2CAP PDU on `cid`, cut into ACL fragments.
    mutating func l2cap(cid: UInt16, _ payload: [UInt8], sent: Bool) {
        let pdu = le16(UInt16(payload.count)) + le16(cid) + payload
        var offset = 0
        while offset < pdu.count {
            let chunk = Array(pdu[offset..<min(offset + aclFragment, pdu.count)])
            let boundary: UInt16 = offset == 0 ? (sent ? 0x0 : 0x2) : 0x1
            let data = le16(handle | boundary << 12) + le16(UInt16(chunk.count)) + chunk
            packets.append(HCIPacket(index: index, opcode: sent ? .aclTX : .aclRX, data: data, unixMicroseconds: tick()))
            offset += chunk.count
        }
    }

    mutating func att(_ pdu: [UInt8], sent: Bool) { l2cap(cid: 0x0004, pdu, sent: sent) }

    /// An ATT PDU as one SDU on a credit-based channel, cut into K-frames of `mps` bytes.
    mutating func eatt(cid: UInt16, _ pdu: [UInt8], sent: Bool, mps: Int = 30) {
        let sdu = le16(UInt16(pdu.count)) + pdu
        var offset = 0
        while offset < sdu.count {
            l2cap(cid: cid, Array(sdu[offset..<min(offset + mps, sdu.count)]), sent: sent)
            offset += mps
        }
    }

    /// L2CAP LE Credit Based Connection Request (sent) and Response (received) for the EATT PSM:
    /// one channel each, what Linux 6.1 with BlueZ 5.66 opens.
    mutating func openLECreditEATT(sourceCID: UInt16, destinationCID: UInt16, mtu: UInt16) {
        l2cap(cid: 0x0005, [0x14, 0x02] + le16(10) + le16(0x0027) + le16(sourceCID) + le16(mtu) + le16(64) + le16(10), sent: true)
        l2cap(cid: 0x0005, [0x15, 0x02] + le16(10) + le16(destinationCID) + le16(mtu) + le16(64) + le16(10) + le16(0), sent: false)
    }

    /// L2CAP Credit Based Connection Request (sent) and Response (received) for the EATT PSM.
    mutating func openEATT(sourceCID: UInt16, destinationCID: UInt16, mtu: UInt16) {
        l2cap(cid: 0x0005, [0x17, 0x01] + le16(10) + le16(0x0027) + le16(mtu) + le16(64) + le16(10) + le16(sourceCID), sent: true)
        l2cap(cid: 0x0005, [0x18, 0x01] + le16(10) + le16(mtu) + le16(64) + le16(10) + le16(0) + le16(destinationCID), sent: false)
    }
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

/// A UUID's bytes as ATT carries them.
func attUUID(_ text: String) -> [UInt8] {
    let hex = Array(text.filter { $0 != "-" })
    return stride(from: 0, to: 32, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16) ?? 0 }.reversed()
}
