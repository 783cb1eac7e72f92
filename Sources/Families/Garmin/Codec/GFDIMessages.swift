import TSGATT

/// The payloads of the GFDI messages the family exchanges (protocol-spec/garmin/garmin.md §3.2–§8),
/// each both ways: read from a payload, and written to one.

/// RESPONSE (5000): `original_type:u16 status:u8` and what the answered message adds.
public struct GFDIResponse: Sendable, Hashable {
    public enum Status: UInt8, Sendable, Hashable {
        case ack = 0, nak = 1, unsupported = 2, decodeError = 3, crcError = 4, lengthError = 5
    }

    public var originalType: UInt16
    /// The status byte as sent; `status` reads it.
    public var statusByte: UInt8
    public var extra: [UInt8]

    public var status: Status? { Status(rawValue: statusByte) }

    public init(originalType: UInt16, status: Status, extra: [UInt8] = []) {
        self.originalType = originalType
        statusByte = status.rawValue
        self.extra = extra
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "a RESPONSE")
        originalType = try reader.u16("the answered type")
        statusByte = try reader.u8("the status")
        extra = reader.remaining
    }

    public var payload: [UInt8] { le16(originalType) + [statusByte] + extra }
    public var frame: GFDIFrame { GFDIFrame(type: GFDIType.response, payload: payload) }
}

/// DEVICE_INFORMATION (5024), the watch's first message and the host's answer in the same layout.
public struct GarminDeviceInformation: Sendable, Hashable {
    public var protocolVersion: UInt16
    /// FIT's garmin_product number (3889: Instinct 2S).
    public var product: UInt16
    /// The serial number.
    public var unit: UInt32
    /// The software version × 100.
    public var software: UInt16
    public var maxPacket: UInt16
    public var bluetoothName: String
    public var deviceName: String
    public var model: String
    /// Bytes some watches add after the three strings; kept, and written back.
    public var trailing: [UInt8]

    public init(protocolVersion: UInt16, product: UInt16, unit: UInt32, software: UInt16, maxPacket: UInt16,
                bluetoothName: String, deviceName: String, model: String, trailing: [UInt8] = []) {
        self.protocolVersion = protocolVersion
        self.product = product
        self.unit = unit
        self.software = software
        self.maxPacket = maxPacket
        self.bluetoothName = bluetoothName
        self.deviceName = deviceName
        self.model = model
        self.trailing = trailing
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "DEVICE_INFORMATION")
        protocolVersion = try reader.u16("the protocol version")
        product = try reader.u16("the product")
        unit = try reader.u32("the unit number")
        software = try reader.u16("the software version")
        maxPacket = try reader.u16("the maximum packet size")
        bluetoothName = try reader.string("the Bluetooth name")
        deviceName = try reader.string("the device name")
        model = try reader.string("the model")
        trailing = reader.remaining
    }

    public func payload() throws(GarminError) -> [UInt8] {
        var writer = ByteWriter()
        writer.u16(protocolVersion); writer.u16(product); writer.u32(unit); writer.u16(software); writer.u16(maxPacket)
        try writer.gfdiString(bluetoothName, "the Bluetooth name")
        try writer.gfdiString(deviceName, "the device name")
        try writer.gfdiString(model, "the model")
        return writer.bytes + trailing
    }

    /// "14.12" for 1412.
    public var softwareVersion: String {
        let minor = software % 100
        return "\(software / 100).\(minor < 10 ? "0" : "")\(minor)"
    }
}

/// AUTH_NEGOTIATION (5101) `unknown:u8 flags:u32`: answered ACK with `0`, both echoed.
public struct GarminAuthNegotiation: Sendable, Hashable {
    public var unknown: UInt8
    public var flags: UInt32

    public init(unknown: UInt8, flags: UInt32) {
        self.unknown = unknown
        self.flags = flags
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "AUTH_NEGOTIATION")
        unknown = try reader.u8("the first byte")
        flags = try reader.u32("the flags")
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u8(unknown); writer.u32(flags)
        return writer.bytes
    }

    /// The host's answer: ACK, 0 (guess ok), the watch's two fields.
    public var answer: GFDIResponse { GFDIResponse(originalType: GFDIType.authNegotiation, status: .ack, extra: [0] + payload) }
}

/// CONFIGURATION (5050): a capability bitmap, bit i of byte i / 8, low bit first.
public struct GarminConfiguration: Sendable, Hashable {
    public var bitmap: [UInt8]

    public static let explicitArchive = 29
    public static let multiLinkService = 76
    public static let realtimeSettings = 92

    public init(bitmap: [UInt8]) { self.bitmap = bitmap }

    public init(capabilities: [Int]) {
        var bitmap = [UInt8](repeating: 0, count: (capabilities.max() ?? -1) / 8 + 1)
        for bit in capabilities { bitmap[bit / 8] |= 1 << UInt8(bit % 8) }
        self.bitmap = bitmap
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "CONFIGURATION")
        let count = Int(try reader.u8("the bitmap's length"))
        bitmap = Array(try reader.take(count, "the capability bitmap"))
    }

    public var payload: [UInt8] { [UInt8(truncatingIfNeeded: bitmap.count)] + bitmap }

    public func has(_ bit: Int) -> Bool { bit / 8 < bitmap.count && bitmap[bit / 8] & (1 << UInt8(bit % 8)) != 0 }
}

/// CURRENT_TIME_REQUEST (5052) `reference:u32`, and the host's answer (§5).
public struct GarminCurrentTimeRequest: Sendable, Hashable {
    public var reference: UInt32

    public init(reference: UInt32) { self.reference = reference }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "CURRENT_TIME_REQUEST")
        reference = try reader.u32("the reference")
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u32(reference)
        return writer.bytes
    }

    /// ACK with `reference now utc_offset next_dst_end next_dst_start`, times in Garmin seconds
    /// (0: no next change), the offset in seconds with daylight saving included.
    public func answer(now: UInt32, utcOffset: Int32, nextDSTEnd: UInt32 = 0, nextDSTStart: UInt32 = 0) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u32(reference); writer.u32(now); writer.u32(UInt32(bitPattern: utcOffset)); writer.u32(nextDSTEnd); writer.u32(nextDSTStart)
        return GFDIResponse(originalType: GFDIType.currentTimeRequest, status: .ack, extra: writer.bytes)
    }

    /// The time a host's answer gave: (reference, now, offset).
    public static func answered(_ response: GFDIResponse) throws(GarminError) -> (reference: UInt32, now: UInt32, utcOffset: Int32) {
        var reader = GarminPayloadReader(response.extra, message: "the answer to CURRENT_TIME_REQUEST")
        let reference = try reader.u32("the reference")
        let now = try reader.u32("the time")
        let offset = Int32(bitPattern: try reader.u32("the UTC offset"))
        return (reference, now, offset)
    }
}

/// SYSTEM_EVENT (5030) `event:u8` and a value.
public struct GarminSystemEvent: Sendable, Hashable {
    public var event: UInt8
    public var value: [UInt8]

    public static let syncComplete: UInt8 = 0
    public static let syncFail: UInt8 = 1
    public static let pairComplete: UInt8 = 4
    public static let syncReady: UInt8 = 8
    public static let setupWizardComplete: UInt8 = 14
    public static let timeUpdated: UInt8 = 16

    public init(event: UInt8, value: [UInt8] = [0]) {
        self.event = event
        self.value = value
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "SYSTEM_EVENT")
        event = try reader.u8("the event")
        value = reader.remaining
    }

    public var payload: [UInt8] { [event] + value }
}

/// DOWNLOAD_REQUEST (5002) and the watch's answer `status download_status:u8 file_size:u32` (§8.2).
public struct GarminDownloadRequest: Sendable, Hashable {
    public var index: UInt16
    public var offset: UInt32
    /// 1: a new download; 0: go on from `offset`.
    public var kind: UInt8
    public var crcSeed: UInt16
    public var size: UInt32

    public init(index: UInt16, offset: UInt32 = 0, kind: UInt8 = 1, crcSeed: UInt16 = 0, size: UInt32 = 0) {
        self.index = index
        self.offset = offset
        self.kind = kind
        self.crcSeed = crcSeed
        self.size = size
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "DOWNLOAD_REQUEST")
        index = try reader.u16("the file index")
        offset = try reader.u32("the offset")
        kind = try reader.u8("the kind")
        crcSeed = try reader.u16("the CRC seed")
        size = try reader.u32("the size")
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u16(index); writer.u32(offset); writer.u8(kind); writer.u16(crcSeed); writer.u32(size)
        return writer.bytes
    }

    /// The watch's answer: its download status (0 ok, 5 not ready, 6 CRC, …) and the file's size.
    public func answer(downloadStatus: UInt8, fileSize: UInt32) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u8(downloadStatus); writer.u32(fileSize)
        return GFDIResponse(originalType: GFDIType.downloadRequest, status: .ack, extra: writer.bytes)
    }

    public static func answered(_ response: GFDIResponse) throws(GarminError) -> (downloadStatus: UInt8, fileSize: UInt32) {
        var reader = GarminPayloadReader(response.extra, message: "the answer to DOWNLOAD_REQUEST")
        return (try reader.u8("the download status"), try reader.u32("the file size"))
    }
}

/// FILE_TRANSFER_DATA (5004) `flags:u8 crc:u16 offset:u32 data`, `crc` the file's running CRC
/// through this chunk; answered with the next offset, this chunk's offset plus its length (§8.3).
public struct GarminFileData: Sendable, Hashable {
    public enum TransferStatus: UInt8, Sendable, Hashable {
        case ok = 0, resend = 1, abort = 2, crcMismatch = 3, offsetMismatch = 4
    }

    public var flags: UInt8
    public var crc: UInt16
    public var offset: UInt32
    public var data: [UInt8]

    public init(flags: UInt8 = 0, crc: UInt16, offset: UInt32, data: [UInt8]) {
        self.flags = flags
        self.crc = crc
        self.offset = offset
        self.data = data
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "FILE_TRANSFER_DATA")
        flags = try reader.u8("the flags")
        crc = try reader.u16("the running CRC")
        offset = try reader.u32("the offset")
        data = reader.remaining
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u8(flags); writer.u16(crc); writer.u32(offset)
        return writer.bytes + data
    }

    /// The chunks of `file` from `offset` on, each at most `chunkSize` bytes, with the running CRC.
    public static func chunks(of file: [UInt8], from offset: Int = 0, chunkSize: Int) -> [GarminFileData] {
        var crc = GarminCRC.checksum(file[..<min(offset, file.count)])
        return stride(from: offset, to: file.count, by: max(1, chunkSize)).map { start in
            let next = chunk(of: file, at: start, chunkSize: chunkSize, crcBefore: crc)
            crc = next.crc
            return next
        }
    }

    /// The one chunk of `file` at `offset` (at most `chunkSize` bytes); `crcBefore` is the running
    /// CRC of the bytes before it, computed when not given. A sender that keeps the CRC of the
    /// last chunk sends a file in one pass.
    public static func chunk(of file: [UInt8], at offset: Int, chunkSize: Int, crcBefore: UInt16? = nil) -> GarminFileData {
        let start = min(max(0, offset), file.count)
        let piece = Array(file[start..<min(start + max(1, chunkSize), file.count)])
        let seed = crcBefore ?? GarminCRC.checksum(file[..<start])
        return GarminFileData(crc: GarminCRC.checksum(piece, seed: seed), offset: UInt32(start), data: piece)
    }

    /// The host's answer: the status and, for ok, the offset it wants next.
    public func answer(_ status: TransferStatus) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u8(status.rawValue); writer.u32(offset &+ UInt32(data.count))
        return GFDIResponse(originalType: GFDIType.fileTransferData, status: .ack, extra: writer.bytes)
    }

    public static func answered(_ response: GFDIResponse) throws(GarminError) -> (status: UInt8, nextOffset: UInt32) {
        var reader = GarminPayloadReader(response.extra, message: "the answer to FILE_TRANSFER_DATA")
        return (try reader.u8("the transfer status"), try reader.u32("the next offset"))
    }
}

/// One entry of the directory, file index 0 (§8.4): 16 bytes.
public struct GarminDirectoryEntry: Sendable, Hashable {
    public var index: UInt16
    public var type: UInt8
    public var subtype: UInt8
    public var number: UInt16
    public var specificFlags: UInt8
    public var flags: UInt8
    public var size: UInt32
    /// Garmin seconds; 0: no date.
    public var time: UInt32

    public static let size = 16
    /// Type 128: a FIT file, its subtype the FIT file type.
    public static let fitType: UInt8 = 128

    public init(index: UInt16, type: UInt8 = Self.fitType, subtype: UInt8, number: UInt16 = 0, specificFlags: UInt8 = 0, flags: UInt8 = 0,
                size: UInt32, time: UInt32) {
        self.index = index
        self.type = type
        self.subtype = subtype
        self.number = number
        self.specificFlags = specificFlags
        self.flags = flags
        self.size = size
        self.time = time
    }

    public var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.u16(index); writer.u8(type); writer.u8(subtype); writer.u16(number); writer.u8(specificFlags); writer.u8(flags)
        writer.u32(size); writer.u32(time)
        return writer.bytes
    }

    /// The directory's entries, all-zero ones passed over; a directory that is no whole number
    /// of entries is refused.
    public static func entries(_ directory: [UInt8]) throws(GarminError) -> [GarminDirectoryEntry] {
        guard directory.count % size == 0 else {
            throw GarminError(.payloadTooShort, "a directory of \(directory.count) bytes is no whole number of \(size)-byte entries")
        }
        var entries: [GarminDirectoryEntry] = []
        for start in stride(from: 0, to: directory.count, by: size) where directory[start..<(start + size)].contains(where: { $0 != 0 }) {
            var reader = GarminPayloadReader(Array(directory[start..<(start + size)]), message: "a directory entry")
            entries.append(GarminDirectoryEntry(index: try reader.u16("the index"), type: try reader.u8("the type"), subtype: try reader.u8("the subtype"),
                                                number: try reader.u16("the number"), specificFlags: try reader.u8("the specific flags"),
                                                flags: try reader.u8("the flags"), size: try reader.u32("the size"), time: try reader.u32("the time")))
        }
        return entries
    }
}

/// SET_FILE_FLAG (5008) `index:u16 flags:u8`; ARCHIVE marks a file synced (§8.4).
public struct GarminSetFileFlag: Sendable, Hashable {
    public var index: UInt16
    public var flags: UInt8

    public static let archive: UInt8 = 0x10

    public init(index: UInt16, flags: UInt8 = Self.archive) {
        self.index = index
        self.flags = flags
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "SET_FILE_FLAG")
        index = try reader.u16("the file index")
        flags = try reader.u8("the flags")
    }

    public var payload: [UInt8] { le16(index) + [flags] }
}
