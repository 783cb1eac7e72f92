import TSModels

/// The btsnoop file format as publicly described (the format Wireshark, tshark and btmon read):
/// a 16-byte header — the 8 bytes "btsnoop\0", a version (1) and a datalink type, both 32-bit
/// big-endian — then records, each a 24-byte big-endian header (original length, included
/// length, flags, cumulative drops, a 64-bit timestamp in microseconds since midnight 1 January
/// 0 AD) and the included bytes. Bytes in, records out: no I/O here.
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let version: UInt32 = 1
    public static let headerSize = 16
    public static let recordHeaderSize = 24
    /// Microseconds from 0 AD (the format's nominal Gregorian epoch) to 1970-01-01, the value
    /// the format's readers use to turn its timestamps into Unix time.
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// The header of a new file.
    public static func header(datalink: BTSnoopDatalink) -> [UInt8] {
        var bytes = magic
        bytes.appendBigEndian(version)
        bytes.appendBigEndian(datalink.rawValue)
        return bytes
    }

    /// One record as it goes into a file; the original length is the data's unless given.
    public static func encode(_ record: BTSnoopRecord) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordHeaderSize + record.data.count)
        bytes.appendBigEndian(record.originalLength)
        bytes.appendBigEndian(UInt32(truncatingIfNeeded: record.data.count))
        bytes.appendBigEndian(record.flags)
        bytes.appendBigEndian(record.drops)
        bytes.appendBigEndian(UInt64(bitPattern: record.timestamp))
        bytes += record.data
        return bytes
    }

    /// A whole file: the header and every record.
    public static func encode(datalink: BTSnoopDatalink, records: [BTSnoopRecord]) -> [UInt8] {
        records.reduce(into: header(datalink: datalink)) { $0 += encode($1) }
    }

    /// Reads a whole file. Every way a file can be wrong is a specific `BTSnoopError`.
    public static func decode(_ bytes: [UInt8]) throws(BTSnoopError) -> BTSnoopFile {
        guard bytes.count >= headerSize else { throw .truncatedHeader(size: bytes.count) }
        guard Array(bytes[0..<8]) == magic else { throw .wrongMagic(Array(bytes[0..<8])) }
        let version = bytes.bigEndianUInt32(at: 8)
        guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
        let datalinkValue = bytes.bigEndianUInt32(at: 12)
        guard let datalink = BTSnoopDatalink(rawValue: datalinkValue) else { throw .unsupportedDatalink(datalinkValue) }
        var records: [BTSnoopRecord] = []
        var offset = headerSize
        while offset < bytes.count {
            let number = records.count + 1
            guard bytes.count - offset >= recordHeaderSize else {
                throw .truncatedRecordHeader(record: number, offset: offset, available: bytes.count - offset)
            }
            let original = bytes.bigEndianUInt32(at: offset)
            let included = bytes.bigEndianUInt32(at: offset + 4)
            let flags = bytes.bigEndianUInt32(at: offset + 8)
            let drops = bytes.bigEndianUInt32(at: offset + 12)
            let timestamp = Int64(bitPattern: bytes.bigEndianUInt64(at: offset + 16))
            guard included <= original else { throw .includedExceedsOriginal(record: number, included: included, original: original) }
            let start = offset + recordHeaderSize
            guard UInt64(included) <= UInt64(bytes.count - start) else {
                throw .recordPastEnd(record: number, offset: offset, length: included, available: bytes.count - start)
            }
            let end = start + Int(included)
            records.append(BTSnoopRecord(data: Array(bytes[start..<end]), flags: flags, timestamp: timestamp, drops: drops, originalLength: original))
            offset = end
        }
        return BTSnoopFile(datalink: datalink, records: records)
    }
}

/// The datalink types this project reads: the Linux monitor format (what btmon and `tsgateway
/// capture` write) and HCI UART (H4, what Android's "Bluetooth HCI snoop log" writes).
public enum BTSnoopDatalink: UInt32, Sendable, Hashable {
    case hciUART = 1002
    case monitor = 2001
}

public struct BTSnoopRecord: Sendable, Hashable {
    public var data: [UInt8]
    /// Monitor format: controller index << 16 | monitor opcode. H4: bit 0 received, bit 1 command/event.
    public var flags: UInt32
    /// Microseconds since 0 AD (see `BTSnoop.unixEpochOffset`).
    public var timestamp: Int64
    public var drops: UInt32
    public var originalLength: UInt32

    public init(data: [UInt8], flags: UInt32, timestamp: Int64, drops: UInt32 = 0, originalLength: UInt32? = nil) {
        self.data = data
        self.flags = flags
        self.timestamp = timestamp
        self.drops = drops
        self.originalLength = originalLength ?? UInt32(truncatingIfNeeded: data.count)
    }

    /// A record stamped with Unix time in microseconds.
    public init(data: [UInt8], flags: UInt32, unixMicroseconds: Int64) {
        self.init(data: data, flags: flags, timestamp: unixMicroseconds &+ BTSnoop.unixEpochOffset)
    }

    /// The timestamp as microseconds since 1970.
    public var unixMicroseconds: Int64 { timestamp &- BTSnoop.unixEpochOffset }
}

public struct BTSnoopFile: Sendable, Hashable {
    public var datalink: BTSnoopDatalink
    public var records: [BTSnoopRecord]

    public init(datalink: BTSnoopDatalink, records: [BTSnoopRecord]) {
        self.datalink = datalink
        self.records = records
    }
}

/// Why a file is not a btsnoop capture this project can read.
public enum BTSnoopError: Error, Sendable, Hashable, CategorizedError, CustomStringConvertible {
    case truncatedHeader(size: Int)
    case wrongMagic([UInt8])
    case unsupportedVersion(UInt32)
    case unsupportedDatalink(UInt32)
    case truncatedRecordHeader(record: Int, offset: Int, available: Int)
    case includedExceedsOriginal(record: Int, included: UInt32, original: UInt32)
    case recordPastEnd(record: Int, offset: Int, length: UInt32, available: Int)

    public var category: ErrorCategory { .invalidInput }

    public var description: String {
        switch self {
        case let .truncatedHeader(size):
            "not a btsnoop file: \(size) byte(s), shorter than the 16-byte btsnoop header"
        case let .wrongMagic(bytes):
            "not a btsnoop file: it starts with \(bytes.hex) instead of \"btsnoop\\0\" (62 74 73 6e 6f 6f 70 00)"
        case let .unsupportedVersion(version):
            "btsnoop version \(version) is not supported (only version 1 exists)"
        case let .unsupportedDatalink(value):
            "btsnoop datalink \(value) is not supported: tsgateway reads 2001 (Linux monitor, from btmon or tsgateway capture) and 1002 (HCI UART, Android's HCI snoop log)"
        case let .truncatedRecordHeader(record, offset, available):
            "btsnoop record \(record) at byte \(offset) is cut short: its 24-byte header has only \(available) byte(s)"
        case let .includedExceedsOriginal(record, included, original):
            "btsnoop record \(record) claims \(included) included byte(s) of a \(original)-byte packet"
        case let .recordPastEnd(record, offset, length, available):
            "btsnoop record \(record) at byte \(offset) has \(length) byte(s) of data but the file ends after \(available)"
        }
    }
}

extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    mutating func appendBigEndian(_ value: UInt64) {
        appendBigEndian(UInt32(value >> 32))
        appendBigEndian(UInt32(value & 0xFFFF_FFFF))
    }

    /// Callers check the bounds first.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    func bigEndianUInt64(at offset: Int) -> UInt64 {
        self[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    var hex: String { map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ") }
}
