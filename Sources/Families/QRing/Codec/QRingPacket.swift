import TSModels

/// One 16-byte packet of the command characteristics: `[command][14 data bytes][checksum]`, the
/// checksum being the sum of bytes 0…14 & 0xFF (protocol-spec/qring/qring.md §2).
public struct QRingPacket: Sendable, Hashable {
    public static let size = 16
    /// Set in the command byte of an answer when the ring could not carry out the request.
    public static let errorBit: UInt8 = 0x80

    public var command: UInt8
    /// Always 14 bytes.
    public private(set) var data: [UInt8]

    /// A packet to send; `data` is padded with zeros to 14 bytes.
    public init(command: UInt8, data: [UInt8] = []) {
        precondition(data.count <= 14, "a packet carries at most 14 data bytes")
        self.command = command
        self.data = data + [UInt8](repeating: 0, count: 14 - data.count)
    }

    /// A packet the ring sent: checks the length, the checksum and the error bit.
    public init(bytes: some Collection<UInt8>) throws(QRingError) {
        let raw = Array(bytes)
        guard raw.count == Self.size else {
            throw QRingError(.packetLength, "a packet from the ring has \(raw.count) bytes, not 16")
        }
        let expected = Self.checksum(raw[0..<15])
        guard raw[15] == expected else {
            throw QRingError(.checksumMismatch, "packet checksum is \(hex(raw[15])), the bytes add up to \(hex(expected)); the packet was damaged")
        }
        guard raw[0] & Self.errorBit == 0 else {
            throw QRingError(.ringReportedError, "the ring reported an error for command \(hex(raw[0] & 0x7F))")
        }
        command = raw[0]
        data = Array(raw[1..<15])
    }

    public static func checksum(_ first15: some Collection<UInt8>) -> UInt8 {
        UInt8(truncatingIfNeeded: first15.reduce(0) { $0 + Int($1) })
    }

    public var bytes: [UInt8] {
        let body = [command] + data
        return body + [Self.checksum(body)]
    }
}

/// Command bytes (protocol-spec/qring/qring.md §2).
public enum QRingCommand {
    public static let setTime: UInt8 = 0x01
    public static let battery: UInt8 = 0x03
    public static let heartRateLog: UInt8 = 0x15
    public static let heartRateLogSettings: UInt8 = 0x16
    public static let realTimeContinue: UInt8 = 0x1E
    public static let spo2Switch: UInt8 = 0x2C
    public static let stressSwitch: UInt8 = 0x36
    public static let hrvSwitch: UInt8 = 0x38
    public static let steps: UInt8 = 0x43
    public static let realTimeStart: UInt8 = 0x69
    public static let realTimeStop: UInt8 = 0x6A
    public static let notice: UInt8 = 0x73

    /// Second byte of a settings packet.
    public static let settingRead: UInt8 = 0x01
    public static let settingWrite: UInt8 = 0x02

    /// The command that reads and writes a switch.
    public static func switchCommand(for monitor: SwitchedMonitor) -> UInt8 {
        switch monitor {
        case .spo2: spo2Switch
        case .stress: stressSwitch
        case .hrv: hrvSwitch
        }
    }

    /// The switch a command reads and writes, if it is a switch command.
    public static func switchedMonitor(command: UInt8) -> SwitchedMonitor? {
        SwitchedMonitor.allCases.first { switchCommand(for: $0) == command }
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return "0x" + (digits.count == 1 ? "0" : "") + digits
}

func bcd(_ value: Int) -> UInt8 { UInt8((value / 10) << 4 | value % 10) }

func fromBCD(_ byte: UInt8, _ what: String) throws(QRingError) -> Int {
    let high = Int(byte >> 4), low = Int(byte & 0x0F)
    guard high <= 9, low <= 9 else { throw QRingError(.invalidBCD, "\(what) byte \(hex(byte)) is not a BCD number") }
    return high * 10 + low
}

func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

func u32(_ bytes: [UInt8], _ at: Int) -> Int64 {
    Int64(bytes[at]) | Int64(bytes[at + 1]) << 8 | Int64(bytes[at + 2]) << 16 | Int64(bytes[at + 3]) << 24
}
