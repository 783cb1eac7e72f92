/// One GFDI message as it travels inside a COBS form (protocol-spec/garmin/garmin.md §3):
/// `length:u16 type:u16 payload crc:u16`, little-endian, `length` counting the whole frame and
/// the CRC-16/ARC covering every byte before it.
public struct GFDIFrame: Sendable, Hashable {
    /// The message type, compact types resolved (`(type & 0xFF) + 5000`).
    public var type: UInt16
    /// The sequence number a compact type carries in bits 8–14; nil for a plain type.
    public var sequence: UInt8?
    public var payload: [UInt8]

    /// Bytes of everything but the payload.
    public static let overhead = 6

    public init(type: UInt16, sequence: UInt8? = nil, payload: [UInt8]) {
        self.type = type
        self.sequence = sequence
        self.payload = payload
    }

    /// The type field as sent: compact when a sequence is given (the type must then be 5000…5255).
    var typeField: UInt16 {
        guard let sequence else { return type }
        return 0x8000 | UInt16(sequence & 0x7F) << 8 | (type &- 5000) & 0xFF
    }

    /// The frame's bytes, CRC included.
    public func bytes() throws(GarminError) -> [UInt8] {
        let length = payload.count + Self.overhead
        guard length <= Int(UInt16.max) else {
            throw GarminError(.frameTooLong, "a GFDI payload of \(payload.count) bytes does not fit a frame's 16-bit length")
        }
        if sequence != nil, !(5000...5255).contains(type) {
            throw GarminError(.frameTooLong, "type \(type) has no compact form (5000…5255 only)")
        }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        out += le16(UInt16(length)) + le16(typeField) + payload
        out += le16(GarminCRC.checksum(out))
        return out
    }

    /// The frame in `bytes` (one COBS form, decoded): its length must be the bytes' count and its
    /// CRC theirs.
    public init(bytes: [UInt8]) throws(GarminError) {
        guard bytes.count >= Self.overhead else {
            throw GarminError(.frameTooShort, "a GFDI frame of \(bytes.count) bytes; a frame has at least \(Self.overhead) (length, type, CRC)")
        }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8
        guard length == bytes.count else {
            throw GarminError(.lengthMismatch, "the GFDI frame says it is \(length) bytes long but is \(bytes.count)")
        }
        let sent = UInt16(bytes[length - 2]) | UInt16(bytes[length - 1]) << 8
        let computed = GarminCRC.checksum(bytes[0..<(length - 2)])
        guard sent == computed else {
            throw GarminError(.crcMismatch, "the GFDI frame's CRC is \(hex16(sent)), its bytes give \(hex16(computed))")
        }
        let field = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
        if field & 0x8000 != 0 {
            type = (field & 0xFF) + 5000
            sequence = UInt8((field >> 8) & 0x7F)
        } else {
            type = field
            sequence = nil
        }
        payload = Array(bytes[4..<(length - 2)])
    }

    /// The frame as it goes on the GFDI handle: `00`, its COBS form, `00`.
    public func delimited() throws(GarminError) -> [UInt8] {
        [0] + COBS.encode(try bytes()) + [0]
    }
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func hex16(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
}

/// The message types of protocol-spec/garmin/garmin.md §3.1.
public enum GFDIType {
    public static let response: UInt16 = 5000
    public static let downloadRequest: UInt16 = 5002
    public static let uploadRequest: UInt16 = 5003
    public static let fileTransferData: UInt16 = 5004
    public static let createFile: UInt16 = 5005
    public static let filter: UInt16 = 5007
    public static let setFileFlag: UInt16 = 5008
    public static let deviceInformation: UInt16 = 5024
    public static let deviceSettings: UInt16 = 5026
    public static let systemEvent: UInt16 = 5030
    public static let supportedFileTypes: UInt16 = 5031
    public static let synchronization: UInt16 = 5037
    public static let protobufRequest: UInt16 = 5043
    public static let protobufResponse: UInt16 = 5044
    public static let configuration: UInt16 = 5050
    public static let currentTimeRequest: UInt16 = 5052
    public static let authNegotiation: UInt16 = 5101
}
