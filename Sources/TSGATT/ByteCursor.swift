/// Reads a payload field by field. Every read checks the bounds and names the field when the
/// payload ends too early, so no input can read past the end.
public struct ByteReader: Sendable {
    private let bytes: [UInt8]
    public private(set) var offset: Int
    private let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    public var remaining: Int { end - offset }

    private mutating func take(_ count: Int, _ field: @autoclosure () -> String) throws(ProtocolError) -> Int {
        guard remaining >= count else {
            throw ProtocolError(.truncatedPayload, "payload ends inside \(field()): needs \(count) byte(s) at offset \(offset), \(remaining) left")
        }
        defer { offset += count }
        return offset
    }

    public mutating func u8(_ field: @autoclosure () -> String) throws(ProtocolError) -> UInt8 {
        bytes[try take(1, field())]
    }

    public mutating func u16(_ field: @autoclosure () -> String) throws(ProtocolError) -> UInt16 {
        let at = try take(2, field())
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    public mutating func u32(_ field: @autoclosure () -> String) throws(ProtocolError) -> UInt32 {
        let at = try take(4, field())
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    public mutating func i16(_ field: @autoclosure () -> String) throws(ProtocolError) -> Int16 {
        Int16(bitPattern: try u16(field()))
    }

    public mutating func i32(_ field: @autoclosure () -> String) throws(ProtocolError) -> Int32 {
        Int32(bitPattern: try u32(field()))
    }

    /// A `u8` length and that many bytes of UTF-8, at most `limit` bytes.
    public mutating func string(_ field: @autoclosure () -> String, limit: Int, tooLong: ProtocolError.Code = .stringTooLong) throws(ProtocolError) -> String {
        let length = Int(try u8("\(field()) length"))
        guard length <= limit else {
            throw ProtocolError(tooLong, "\(field()) is \(length) bytes, limit \(limit)")
        }
        let at = try take(length, field())
        guard let text = String(validating: bytes[at..<at + length], as: UTF8.self) else {
            throw ProtocolError(.invalidUTF8, "\(field()) is not valid UTF-8")
        }
        return text
    }

    /// Fails when bytes are left after the layout was read.
    public func finish(_ what: String) throws(ProtocolError) {
        guard remaining == 0 else {
            throw ProtocolError(.trailingBytes, "\(remaining) byte(s) left after the \(what) payload")
        }
    }
}

/// Builds a payload field by field, little-endian.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 16) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func u8(_ value: UInt8) { bytes.append(value) }

    public mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    public mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    public mutating func i16(_ value: Int16) { u16(UInt16(bitPattern: value)) }
    public mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }

    public mutating func string(_ text: String, _ field: String, limit: Int, tooLong: ProtocolError.Code = .stringTooLong) throws(ProtocolError) {
        let utf8 = Array(text.utf8)
        guard utf8.count <= limit else {
            throw ProtocolError(tooLong, "\(field) is \(utf8.count) bytes, limit \(limit)")
        }
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}
