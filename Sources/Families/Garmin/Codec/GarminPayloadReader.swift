import TSGATT

/// Reads a GFDI payload's fields in order, little-endian; running out is `payloadTooShort` naming
/// the message and the field.
struct GarminPayloadReader {
    let bytes: [UInt8]
    let message: String
    var at = 0

    init(_ bytes: [UInt8], message: String) {
        self.bytes = bytes
        self.message = message
    }

    var remaining: [UInt8] { Array(bytes[at...]) }

    mutating func take(_ count: Int, _ field: String) throws(GarminError) -> ArraySlice<UInt8> {
        guard at + count <= bytes.count else {
            throw GarminError(.payloadTooShort, "\(message): its \(bytes.count)-byte payload ends before \(field) (byte \(at), \(count) byte(s))")
        }
        defer { at += count }
        return bytes[at..<(at + count)]
    }

    mutating func u8(_ field: String) throws(GarminError) -> UInt8 { try take(1, field).first! }

    mutating func u16(_ field: String) throws(GarminError) -> UInt16 {
        let raw = try take(2, field)
        return UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    }

    mutating func u32(_ field: String) throws(GarminError) -> UInt32 {
        try take(4, field).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// A u8 byte count and that many bytes of UTF-8.
    mutating func string(_ field: String) throws(GarminError) -> String {
        let count = Int(try u8("the length of \(field)"))
        let raw = try take(count, field)
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw GarminError(.invalidUTF8, "\(message): \(field) is not UTF-8 (\(hexString(raw)))")
        }
        return text
    }
}

extension ByteWriter {
    /// A GFDI string: a u8 byte count and UTF-8, at most 255 bytes (TSGATT's writer, Garmin's error).
    mutating func gfdiString(_ text: String, _ field: String) throws(GarminError) {
        do {
            try string(text, field, limit: 255)
        } catch {
            throw GarminError(.stringTooLong, "\(field) of \(text.utf8.count) bytes; a GFDI string holds at most 255")
        }
    }
}
