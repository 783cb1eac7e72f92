import TSModels

/// The Linux monitor channel's record types (the `opcode` of each monitor header, as btmon
/// documents them): controller lifecycle, HCI traffic per controller, and notes.
public enum MonitorOpcode: UInt16, Sendable, Hashable {
    case newIndex = 0, deleteIndex = 1, command = 2, event = 3, aclTX = 4, aclRX = 5, scoTX = 6, scoRX = 7
    case openIndex = 8, closeIndex = 9, indexInfo = 10, vendorDiagnostic = 11, systemNote = 12, userLogging = 13
    case controlOpen = 14, controlClose = 15, controlCommand = 16, controlEvent = 17, isoTX = 18, isoRX = 19
}

/// One HCI-side record of a capture, whichever datalink it came from: the controller index
/// (0xFFFF for records of no controller), the monitor opcode and the packet without any
/// transport header.
public struct HCIPacket: Sendable, Hashable {
    /// The monitor channel's index for records that belong to no controller (HCI_DEV_NONE).
    public static let noIndex: UInt16 = 0xFFFF

    public var index: UInt16
    /// A `MonitorOpcode` raw value; unknown values are kept so that captures from newer kernels still read.
    public var opcode: UInt16
    public var data: [UInt8]
    public var unixMicroseconds: Int64

    public init(index: UInt16, opcode: MonitorOpcode, data: [UInt8], unixMicroseconds: Int64) {
        self.init(index: index, rawOpcode: opcode.rawValue, data: data, unixMicroseconds: unixMicroseconds)
    }

    public init(index: UInt16, rawOpcode: UInt16, data: [UInt8], unixMicroseconds: Int64) {
        self.index = index
        self.opcode = rawOpcode
        self.data = data
        self.unixMicroseconds = unixMicroseconds
    }

    public var kind: MonitorOpcode? { MonitorOpcode(rawValue: opcode) }

    /// The record in the monitor datalink (2001): flags are index << 16 | opcode.
    public var monitorRecord: BTSnoopRecord {
        BTSnoopRecord(data: data, flags: UInt32(index) << 16 | UInt32(opcode), unixMicroseconds: unixMicroseconds)
    }

    /// The packets of a capture. H4 records (datalink 1002) become packets of controller 0;
    /// empty H4 records and H4 types without an HCI meaning are skipped.
    public static func packets(of file: BTSnoopFile) -> [HCIPacket] {
        switch file.datalink {
        case .monitor:
            return file.records.map {
                HCIPacket(index: UInt16($0.flags >> 16), rawOpcode: UInt16($0.flags & 0xFFFF), data: $0.data, unixMicroseconds: $0.unixMicroseconds)
            }
        case .hciUART:
            return file.records.compactMap { record in
                guard let type = record.data.first else { return nil }
                let received = record.flags & 1 == 1
                let opcode: MonitorOpcode
                switch type {
                case 0x01: opcode = .command
                case 0x02: opcode = received ? .aclRX : .aclTX
                case 0x03: opcode = received ? .scoRX : .scoTX
                case 0x04: opcode = .event
                case 0x05: opcode = received ? .isoRX : .isoTX
                default: return nil
                }
                return HCIPacket(index: 0, opcode: opcode, data: Array(record.data.dropFirst()), unixMicroseconds: record.unixMicroseconds)
            }
        }
    }
}

/// The HCI events the capture filter and the decoder follow (Bluetooth Core, Vol 4 Part E 7.7).
public enum HCIEvent: Sendable, Hashable {
    /// LE Connection Complete or LE Enhanced Connection Complete (v1 or v2). Interval in 1.25 ms units.
    case leConnectionComplete(status: UInt8, handle: UInt16, role: UInt8, peer: BluetoothAddress, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    /// LE Connection Update Complete.
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    /// LE Advertising Report, Extended or Directed Advertising Report: the raw parameters.
    case leAdvertisingReport(parameters: [UInt8])

    /// The event in an HCI event packet (event code, parameter length, parameters), or nil
    /// for other or malformed events.
    public init?(packet data: [UInt8]) {
        guard data.count >= 2, data.count >= 2 + Int(data[1]) else { return nil }
        let parameters = Array(data[2..<2 + Int(data[1])])
        switch data[0] {
        case 0x05:
            guard parameters.count >= 4 else { return nil }
            self = .disconnectionComplete(status: parameters[0], handle: parameters.littleEndianUInt16(at: 1) & 0x0FFF, reason: parameters[3])
        case 0x3E:
            guard let subevent = parameters.first else { return nil }
            let p = Array(parameters.dropFirst())
            switch subevent {
            case 0x01, 0x0A, 0x29:
                // Status, handle, role, peer address type, peer address; Enhanced adds the two
                // 6-byte resolvable private addresses before the interval.
                let intervalOffset = subevent == 0x01 ? 11 : 23
                guard p.count >= intervalOffset + 6, let peer = BluetoothAddress(littleEndian: Array(p[5..<11])) else { return nil }
                self = .leConnectionComplete(
                    status: p[0], handle: p.littleEndianUInt16(at: 1) & 0x0FFF, role: p[3], peer: peer,
                    interval: p.littleEndianUInt16(at: intervalOffset), latency: p.littleEndianUInt16(at: intervalOffset + 2),
                    supervisionTimeout: p.littleEndianUInt16(at: intervalOffset + 4))
            case 0x03:
                guard p.count >= 9 else { return nil }
                self = .leConnectionUpdateComplete(
                    status: p[0], handle: p.littleEndianUInt16(at: 1) & 0x0FFF, interval: p.littleEndianUInt16(at: 3),
                    latency: p.littleEndianUInt16(at: 5), supervisionTimeout: p.littleEndianUInt16(at: 7))
            case 0x02, 0x0B, 0x0D:
                self = .leAdvertisingReport(parameters: p)
            default:
                return nil
            }
        default:
            return nil
        }
    }
}

extension [UInt8] {
    /// Callers check the bounds first.
    func littleEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }
}
