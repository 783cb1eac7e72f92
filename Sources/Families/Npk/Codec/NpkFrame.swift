/// Flags of an NPK frame (byte 3). Bits 0–4 are reserved: kept as received, sent as 0.
public struct NpkFrameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Marks an answer; the SDK calls it deprecated and does not rely on it.
    public static let response = NpkFrameFlags(rawValue: 0x80)
    public static let retransmission = NpkFrameFlags(rawValue: 0x40)
    /// The payload starts with a list header (`NpkListPosition`).
    public static let list = NpkFrameFlags(rawValue: 0x20)
}

/// One NPK frame: magic 0xAB, cmd, key, flags, payload length (big-endian), CRC-16/ARC of the
/// payload (big-endian, 0 when empty), sequence (big-endian), payload.
public struct NpkFrame: Sendable, Hashable, CustomStringConvertible {
    public static let magic: UInt8 = 0xAB
    public static let headerSize = 10
    /// The longest payload a receiver accepts (the SDK's bound).
    public static let maxPayloadLength = 0x2000

    public var command: NpkCommand
    public var flags: NpkFrameFlags
    public var sequence: UInt16
    public var payload: [UInt8]

    public init(command: NpkCommand, flags: NpkFrameFlags = [], sequence: UInt16, payload: [UInt8] = []) {
        self.command = command
        self.flags = flags
        self.sequence = sequence
        self.payload = payload
    }

    /// The frame's bytes; a payload over the bound is refused.
    public func encoded() throws -> [UInt8] {
        guard payload.count <= Self.maxPayloadLength else {
            throw NpkError(.payloadTooLarge, "\(command): a payload of \(payload.count) bytes is over the dialect's bound of \(Self.maxPayloadLength)")
        }
        let length = UInt16(payload.count), crc = NpkCRC16.frameField(payload)
        var bytes: [UInt8] = [Self.magic, command.cmd, command.key, flags.rawValue,
                              UInt8(length >> 8), UInt8(length & 0xFF), UInt8(crc >> 8), UInt8(crc & 0xFF),
                              UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        bytes.reserveCapacity(Self.headerSize + payload.count)
        bytes += payload
        return bytes
    }

    /// Decodes exactly one whole frame.
    public init(decoding input: some Collection<UInt8>) throws {
        let bytes = Array(input)
        guard bytes.first == Self.magic else {
            throw NpkError(.badMagic, "an NPK frame starts with 0xAB, this one with \(bytes.first.map { "0x" + hex2($0) } ?? "nothing")")
        }
        guard bytes.count >= Self.headerSize else {
            throw NpkError(.truncatedHeader, "an NPK frame header is 10 bytes, only \(bytes.count) came")
        }
        let length = Int(bytes[4]) << 8 | Int(bytes[5])
        guard length <= Self.maxPayloadLength else {
            throw NpkError(.lengthOverBound, "payload length \(length) is over the bound of \(Self.maxPayloadLength) bytes")
        }
        guard bytes.count == Self.headerSize + length else {
            throw NpkError(.lengthMismatch, "the header says \(length) payload bytes, \(bytes.count - Self.headerSize) follow it")
        }
        let payload = Array(bytes[Self.headerSize...])
        let crc = UInt16(bytes[6]) << 8 | UInt16(bytes[7]), expected = NpkCRC16.frameField(payload)
        guard crc == expected else {
            throw NpkError(.crcMismatch, "CRC 0x\(hex4(crc)) in the header, the payload's is 0x\(hex4(expected)): the frame was damaged on the way")
        }
        self.init(command: NpkCommand(cmd: bytes[1], key: bytes[2]), flags: NpkFrameFlags(rawValue: bytes[3]),
                  sequence: UInt16(bytes[8]) << 8 | UInt16(bytes[9]), payload: payload)
    }

    public var description: String { "\(command) seq \(sequence) flags 0x\(hex2(flags.rawValue)), \(payload.count) bytes" }
}

func hex2(_ value: UInt8) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return value < 0x10 ? "0" + text : text
}

func hex4(_ value: UInt16) -> String { hex2(UInt8(value >> 8)) + hex2(UInt8(value & 0xFF)) }
