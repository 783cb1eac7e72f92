import TSGATT
/// A command id (wire-protocol.md §6). Unknown ids are representable so that they can be
/// reported and answered with UNKNOWN_COMMAND.
public struct CommandID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let hello = CommandID(rawValue: 0x0001)
    public static let deviceInfo = CommandID(rawValue: 0x0002)
    public static let timeSet = CommandID(rawValue: 0x0003)
    public static let battery = CommandID(rawValue: 0x0004)
    public static let alarmsGet = CommandID(rawValue: 0x0010)
    public static let alarmsSet = CommandID(rawValue: 0x0011)
    public static let alarmsChanged = CommandID(rawValue: 0x0012)
    public static let monitorGet = CommandID(rawValue: 0x0020)
    public static let monitorSet = CommandID(rawValue: 0x0021)
    public static let sleepQuery = CommandID(rawValue: 0x0030)
    public static let sleepPage = CommandID(rawValue: 0x0031)
    public static let sleepPageAck = CommandID(rawValue: 0x0032)
    public static let sleepCommit = CommandID(rawValue: 0x0033)
    public static let sleepAbort = CommandID(rawValue: 0x0034)
    public static let liveSubscribe = CommandID(rawValue: 0x0040)
    public static let liveStage = CommandID(rawValue: 0x0041)
    public static let error = CommandID(rawValue: 0x00FF)
    // Version 1.1 (§9).
    public static let extensions = CommandID(rawValue: 0x0100)
    public static let ring = CommandID(rawValue: 0x0101)
    public static let alarmAlert = CommandID(rawValue: 0x0102)

    /// Every command protocol version 1 defines, in id order.
    public static let allVersion1: [CommandID] = [
        .hello, .deviceInfo, .timeSet, .battery, .alarmsGet, .alarmsSet, .alarmsChanged, .monitorGet, .monitorSet,
        .sleepQuery, .sleepPage, .sleepPageAck, .sleepCommit, .sleepAbort, .liveSubscribe, .liveStage, .error,
    ]

    /// The commands version 1.1 adds, in id order.
    public static let addedInVersion1_1: [CommandID] = [.extensions, .ring, .alarmAlert]

    /// Every command this codec knows: version 1 and 1.1.
    public static let all: [CommandID] = allVersion1 + addedInVersion1_1

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

public struct FrameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Answers the peer's frame with the same sequence number.
    public static let response = FrameFlags(rawValue: 0x01)
    /// An unsolicited watch message that must be acknowledged.
    public static let event = FrameFlags(rawValue: 0x02)

    /// The flags this version defines; the others are ignored on receipt.
    public static let defined: FrameFlags = [.response, .event]
}

/// One protocol frame (wire-protocol.md §2): the unit of the byte stream.
public struct Frame: Sendable, Hashable {
    public static let startMarker: UInt8 = 0xA5
    public static let version: UInt8 = 1
    public static let headerSize = 8
    public static let trailerSize = 4
    public static let overhead = headerSize + trailerSize
    public static let maxPayload = 2048

    public var flags: FrameFlags
    public var sequence: UInt8
    public var command: CommandID
    public var payload: [UInt8]

    public init(flags: FrameFlags, sequence: UInt8, command: CommandID, payload: [UInt8] = []) {
        self.flags = flags
        self.sequence = sequence
        self.command = command
        self.payload = payload
    }

    /// The frame's bytes: header, payload, CRC-32. Fails only for a payload over 2048 bytes.
    public func encoded() throws(ProtocolError) -> [UInt8] {
        guard payload.count <= Frame.maxPayload else {
            throw ProtocolError(.payloadTooLarge, "payload of \(payload.count) bytes exceeds the maximum of \(Frame.maxPayload)")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Frame.overhead + payload.count)
        bytes += [Frame.startMarker, Frame.version, flags.rawValue, sequence,
                  UInt8(truncatingIfNeeded: command.rawValue), UInt8(truncatingIfNeeded: command.rawValue >> 8),
                  UInt8(truncatingIfNeeded: payload.count), UInt8(truncatingIfNeeded: payload.count >> 8)]
        bytes += payload
        let crc = bytes.withUnsafeBufferPointer { CRC32.checksum($0) }
        bytes += [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8),
                  UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 24)]
        return bytes
    }

    /// Decodes exactly one frame from `bytes` (no more, no less).
    public static func decode(_ bytes: [UInt8], maxPayload: Int = Frame.maxPayload) throws(ProtocolError) -> Frame {
        let header = try FrameHeader.parse(bytes, at: 0, maxPayload: maxPayload)
        let total = Frame.overhead + header.payloadLength
        guard bytes.count >= total else {
            throw ProtocolError(.truncatedFrame, "frame needs \(total) bytes (payload \(header.payloadLength)), got \(bytes.count)")
        }
        guard bytes.count == total else {
            throw ProtocolError(.lengthMismatch, "payload length says the frame is \(total) bytes, got \(bytes.count)")
        }
        return try header.frame(in: bytes, at: 0)
    }
}

/// The eight header bytes of a frame, checked for version and length.
public struct FrameHeader: Sendable, Hashable {
    public var flags: FrameFlags
    public var sequence: UInt8
    public var command: CommandID
    public var payloadLength: Int

    /// Parses the header at `offset`, which must hold the start marker.
    static func parse(_ bytes: [UInt8], at offset: Int, maxPayload: Int) throws(ProtocolError) -> FrameHeader {
        let available = bytes.count - offset
        guard available >= 1, bytes[offset] == Frame.startMarker else {
            let found = available >= 1 ? "0x" + String(bytes[offset], radix: 16) : "nothing"
            throw ProtocolError(.badStartMarker, "frame starts with \(found), not the start marker 0xa5")
        }
        guard available >= Frame.headerSize else {
            throw ProtocolError(.truncatedFrame, "frame header needs \(Frame.headerSize) bytes, got \(available)")
        }
        guard bytes[offset + 1] == Frame.version else {
            throw ProtocolError(.unsupportedVersion, "protocol version \(bytes[offset + 1]) is not supported (this gateway speaks version \(Frame.version))")
        }
        let length = Int(bytes[offset + 6]) | Int(bytes[offset + 7]) << 8
        guard length <= maxPayload else {
            throw ProtocolError(.payloadTooLarge, "payload length \(length) exceeds the maximum of \(maxPayload)")
        }
        return FrameHeader(
            flags: FrameFlags(rawValue: bytes[offset + 2]), sequence: bytes[offset + 3],
            command: CommandID(rawValue: UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8),
            payloadLength: length)
    }

    /// Checks the CRC of the complete frame at `offset` and returns it.
    func frame(in bytes: [UInt8], at offset: Int) throws(ProtocolError) -> Frame {
        let crcOffset = offset + Frame.headerSize + payloadLength
        let computed = bytes.withUnsafeBufferPointer { buffer in
            CRC32.checksum(UnsafeBufferPointer(rebasing: buffer[offset..<crcOffset]))
        }
        let stored = UInt32(bytes[crcOffset]) | UInt32(bytes[crcOffset + 1]) << 8
            | UInt32(bytes[crcOffset + 2]) << 16 | UInt32(bytes[crcOffset + 3]) << 24
        guard computed == stored else {
            throw ProtocolError(.crcMismatch, "CRC mismatch in frame \(command) seq \(sequence): carries 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16))")
        }
        return Frame(flags: flags, sequence: sequence, command: command,
                     payload: Array(bytes[(offset + Frame.headerSize)..<crcOffset]))
    }
}
