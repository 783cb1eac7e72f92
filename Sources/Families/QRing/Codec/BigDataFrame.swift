/// CRC-16/MODBUS: init 0xFFFF, polynomial 0x8005 reflected (0xA001), no final xor.
/// Check value: CRC of the ASCII bytes `123456789` is 0x4B37.
public enum CRC16Modbus {
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}

/// A big-data frame: `[0xBC][type][length u16 LE][CRC-16/MODBUS of the payload, u16 LE][payload]`
/// (protocol-spec/qring/qring.md §5).
public struct BigDataFrame: Sendable, Hashable {
    public static let marker: UInt8 = 0xBC
    public static let headerSize = 6
    public static let sleepType: UInt8 = 0x27

    public var type: UInt8
    public var payload: [UInt8]

    public init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    public var bytes: [UInt8] {
        let crc = CRC16Modbus.checksum(payload)
        let length = UInt16(payload.count)
        return [Self.marker, type, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(crc & 0xFF), UInt8(crc >> 8)] + payload
    }

    /// The sleep request the project sends (Gadgetbridge's form, `bc 27 01 00 ff 00 ff`).
    public static let sleepRequest = BigDataFrame(type: sleepType, payload: [0xFF])
    /// The form firmware RT03CR_1.00.02 (an R10) answers (`bc 27 02 00 81 80 ff 01`).
    public static let sleepRequestTwoByte = BigDataFrame(type: sleepType, payload: [0xFF, 0x01])
}

/// Turns the notifications of the big-data characteristic into frames. A frame's bytes may
/// arrive in any number of notifications; bytes before a marker are skipped, a length above
/// `maxPayload` makes the marker a false start, a wrong CRC drops the frame, and `expire()` (the
/// caller's timeout) drops a frame whose bytes never all arrived. Each drop is counted.
public struct BigDataReassembler: Sendable {
    public static let defaultMaxPayload = 4096

    public let maxPayload: Int
    public private(set) var garbageBytes = 0
    public private(set) var oversized = 0
    public private(set) var crcMismatches = 0
    public private(set) var incomplete = 0
    private var buffer: [UInt8] = []

    public init(maxPayload: Int = defaultMaxPayload) { self.maxPayload = maxPayload }

    /// Whether part of a frame is waiting for its remaining bytes.
    public var hasPartialFrame: Bool { !buffer.isEmpty }

    public mutating func feed(_ chunk: some Collection<UInt8>) -> [BigDataFrame] {
        buffer += chunk
        var frames: [BigDataFrame] = []
        while true {
            guard let start = buffer.firstIndex(of: BigDataFrame.marker) else {
                garbageBytes += buffer.count
                buffer.removeAll()
                return frames
            }
            garbageBytes += start
            buffer.removeFirst(start)
            guard buffer.count >= BigDataFrame.headerSize else { return frames }
            let length = u16(buffer, 2)
            guard length <= maxPayload else {
                oversized += 1
                buffer.removeFirst()
                continue
            }
            let end = BigDataFrame.headerSize + length
            guard buffer.count >= end else { return frames }
            let frame = BigDataFrame(type: buffer[1], payload: Array(buffer[BigDataFrame.headerSize..<end]))
            let crc = UInt16(u16(buffer, 4))
            buffer.removeFirst(end)
            if CRC16Modbus.checksum(frame.payload) == crc {
                frames.append(frame)
            } else {
                crcMismatches += 1
            }
        }
    }

    /// The caller's timeout: a frame still missing bytes is dropped and counted.
    public mutating func expire() {
        if !buffer.isEmpty { incomplete += 1 }
        buffer.removeAll()
    }
}
