import TSGATT

/// The messages that put a file on the watch (protocol-spec/garmin/garmin.md §10): CREATE_FILE
/// makes room for it and names its index, UPLOAD_REQUEST opens the upload, and the host then
/// sends FILE_TRANSFER_DATA chunks (`GarminFileData`), each answered by the watch with the next
/// offset, as the watch's chunks are in a download.

/// CREATE_FILE (5005) `size:u32 type:u8 subtype:u8 index:u16 00 00 number_mask:u16 00 00
/// random:u64`; the watch answers `status create_status:u8 index:u16 type:u8 subtype:u8 number:u16`.
public struct GarminCreateFile: Sendable, Hashable {
    public var size: UInt32
    public var type: UInt8
    public var subtype: UInt8
    /// 0: the watch chooses.
    public var index: UInt16
    public var numberMask: UInt16
    /// Tells one creation from another (Gadgetbridge sends a random one).
    public var nonce: UInt64

    public init(size: UInt32, type: UInt8 = GarminDirectoryEntry.fitType, subtype: UInt8, index: UInt16 = 0,
                numberMask: UInt16 = 0xFFFF, nonce: UInt64) {
        self.size = size
        self.type = type
        self.subtype = subtype
        self.index = index
        self.numberMask = numberMask
        self.nonce = nonce
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "CREATE_FILE")
        size = try reader.u32("the size")
        type = try reader.u8("the type")
        subtype = try reader.u8("the subtype")
        index = try reader.u16("the index")
        _ = try reader.u16("the reserved bytes after the index")
        numberMask = try reader.u16("the number mask")
        _ = try reader.u16("the reserved bytes after the number mask")
        let low = UInt64(try reader.u32("the nonce"))
        nonce = low | UInt64(try reader.u32("the nonce's high half")) << 32
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u32(size); writer.u8(type); writer.u8(subtype); writer.u16(index); writer.u16(0); writer.u16(numberMask); writer.u16(0)
        writer.u32(UInt32(truncatingIfNeeded: nonce)); writer.u32(UInt32(truncatingIfNeeded: nonce >> 32))
        return writer.bytes
    }

    /// The watch's answer: 0 created (and where), else why not.
    public func answer(createStatus: UInt8, index: UInt16, number: UInt16) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u8(createStatus); writer.u16(index); writer.u8(type); writer.u8(subtype); writer.u16(number)
        return GFDIResponse(originalType: GFDIType.createFile, status: .ack, extra: writer.bytes)
    }

    public static func answered(_ response: GFDIResponse) throws(GarminError) -> (createStatus: UInt8, index: UInt16, type: UInt8, subtype: UInt8, number: UInt16) {
        var reader = GarminPayloadReader(response.extra, message: "the answer to CREATE_FILE")
        return (try reader.u8("the create status"), try reader.u16("the index"), try reader.u8("the type"), try reader.u8("the subtype"),
                try reader.u16("the number"))
    }
}

/// UPLOAD_REQUEST (5003) `index:u16 size:u32 offset:u32 crc_seed:u16`; the watch answers `status
/// upload_status:u8 offset:u32 max_size:u32 crc_seed:u16`: where to start, and the most data bytes a
/// chunk may carry.
public struct GarminUploadRequest: Sendable, Hashable {
    public var index: UInt16
    public var size: UInt32
    public var offset: UInt32
    public var crcSeed: UInt16

    public init(index: UInt16, size: UInt32, offset: UInt32 = 0, crcSeed: UInt16 = 0) {
        self.index = index
        self.size = size
        self.offset = offset
        self.crcSeed = crcSeed
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "UPLOAD_REQUEST")
        index = try reader.u16("the file index")
        size = try reader.u32("the size")
        offset = try reader.u32("the offset")
        crcSeed = try reader.u16("the CRC seed")
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u16(index); writer.u32(size); writer.u32(offset); writer.u16(crcSeed)
        return writer.bytes
    }

    public func answer(uploadStatus: UInt8, offset: UInt32, maxSize: UInt32, crcSeed: UInt16) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u8(uploadStatus); writer.u32(offset); writer.u32(maxSize); writer.u16(crcSeed)
        return GFDIResponse(originalType: GFDIType.uploadRequest, status: .ack, extra: writer.bytes)
    }

    public static func answered(_ response: GFDIResponse) throws(GarminError) -> (uploadStatus: UInt8, offset: UInt32, maxSize: UInt32, crcSeed: UInt16) {
        var reader = GarminPayloadReader(response.extra, message: "the answer to UPLOAD_REQUEST")
        return (try reader.u8("the upload status"), try reader.u32("the offset"), try reader.u32("the largest chunk"), try reader.u16("the CRC seed"))
    }
}
