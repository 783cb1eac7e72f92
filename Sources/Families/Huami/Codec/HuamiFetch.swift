import Foundation

/// What the central writes to the fetch-control characteristic (`…0004…`) (protocol-spec/huami/huami.md §7).
public enum HuamiFetchRequest: Sendable, Hashable {
    /// `[01, type]` + the short time (8 bytes): "send me data of `type` since `since`".
    case start(type: UInt8, since: HuamiTime)
    /// `[02]`: send the data now (it comes on the activity-data characteristic).
    case fetchData
    /// `[03]`: the data is received (a classic band may then drop it).
    case acknowledge

    /// Data type 1: the per-minute activity samples.
    public static let activityType: UInt8 = 0x01
    public static let startOpcode: UInt8 = 0x01
    public static let fetchDataOpcode: UInt8 = 0x02
    public static let acknowledgeOpcode: UInt8 = 0x03

    /// The activity fetch from the minute that holds `unixSeconds`, in the band's zone: byte 6 of
    /// the short time is 0, as Gadgetbridge writes it.
    public static func activity(since unixSeconds: Int64, zone: TimeZone) -> HuamiFetchRequest {
        var since = HuamiTime(unixSeconds: unixSeconds, zone: zone)
        since.second = 0
        return .start(type: activityType, since: since)
    }

    public var bytes: [UInt8] {
        switch self {
        case let .start(type, since): [Self.startOpcode, type] + since.shortBytes
        case .fetchData: [Self.fetchDataOpcode]
        case .acknowledge: [Self.acknowledgeOpcode]
        }
    }

    /// Reads a request as the simulated band receives it; `start` takes the short time (10 bytes in
    /// all) or the 11-byte Current Time form of seconds precision (13 bytes).
    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard let opcode = raw.first else { throw HuamiError(.tooShort, "an empty fetch request") }
        switch opcode {
        case Self.startOpcode:
            switch raw.count {
            case 2 + HuamiTime.shortSize: self = .start(type: raw[1], since: try HuamiTime(shortBytes: raw[2...]))
            case 2 + HuamiTime.currentTimeSize: self = .start(type: raw[1], since: try HuamiTime(currentTimeBytes: raw[2...]))
            default: throw HuamiError(.badLength, "a fetch start has 10 or 13 bytes, not \(raw.count)")
            }
        case Self.fetchDataOpcode, Self.acknowledgeOpcode:
            guard raw.count == 1 else { throw HuamiError(.badLength, "fetch request \(hex(opcode)) has 1 byte, not \(raw.count)") }
            self = opcode == Self.fetchDataOpcode ? .fetchData : .acknowledge
        default:
            throw HuamiError(.unknownOpcode, "fetch request opcode \(hex(opcode)) is none of 01, 02, 03")
        }
    }
}

/// What the band notifies on the fetch-control characteristic.
public enum HuamiFetchAnswer: Sendable, Hashable {
    /// `10 01 01`, u32 LE count, short start time (15 bytes; a 16th byte, sent by later models, is ignored).
    /// The count is the number of data bytes that will follow, counter bytes excluded (§7.3).
    case started(count: UInt32, start: HuamiTime)
    /// `10 02 01`, optionally a u32 LE CRC-32 of the data bytes: the data is all sent.
    case finished(crc32: UInt32?)
    /// `10 03 01`: the acknowledgement was taken.
    case acknowledged
    /// `10 <opcode> <status>` with a status other than 01.
    case refused(opcode: UInt8, status: UInt8)

    public var bytes: [UInt8] {
        switch self {
        case let .started(count, start): [responseMarker, HuamiFetchRequest.startOpcode, statusSuccess] + le32(count) + start.shortBytes
        case let .finished(crc): [responseMarker, HuamiFetchRequest.fetchDataOpcode, statusSuccess] + (crc.map(le32) ?? [])
        case .acknowledged: [responseMarker, HuamiFetchRequest.acknowledgeOpcode, statusSuccess]
        case let .refused(opcode, status): [responseMarker, opcode, status]
        }
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 3 else { throw HuamiError(.tooShort, "a fetch answer has \(raw.count) bytes, at least 3 expected") }
        guard raw[0] == responseMarker else { throw HuamiError(.notAResponse, "a fetch answer starts with 10, not \(hex(raw[0]))") }
        let opcode = raw[1]
        guard (1...3).contains(opcode) else { throw HuamiError(.unknownOpcode, "fetch answer opcode \(hex(opcode)) is none of 01, 02, 03") }
        guard raw[2] == statusSuccess else {
            guard raw.count == 3 else { throw HuamiError(.badLength, "a refusal has 3 bytes, not \(raw.count)") }
            self = .refused(opcode: opcode, status: raw[2])
            return
        }
        switch opcode {
        case HuamiFetchRequest.startOpcode:
            guard raw.count == 15 || raw.count == 16 else { throw HuamiError(.badLength, "a fetch start answer has 15 or 16 bytes, not \(raw.count)") }
            self = .started(count: u32(raw, 3), start: try HuamiTime(shortBytes: raw[7..<15]))
        case HuamiFetchRequest.fetchDataOpcode:
            switch raw.count {
            case 3: self = .finished(crc32: nil)
            case 7: self = .finished(crc32: u32(raw, 3))
            default: throw HuamiError(.badLength, "a fetch end has 3 or 7 bytes, not \(raw.count)")
            }
        default:
            guard raw.count == 3 else { throw HuamiError(.badLength, "an acknowledgement answer has 3 bytes, not \(raw.count)") }
            self = .acknowledged
        }
    }

    /// `fetchRefused` for a refusal, nil otherwise.
    public var error: HuamiError? {
        guard case let .refused(opcode, status) = self else { return nil }
        let step = ["", "the fetch start", "the data request", "the acknowledgement"][Int(opcode)]
        return HuamiError(.fetchRefused, "the band answered \(step) with status \(hex(status))")
    }
}

/// One notification of the activity-data characteristic (`…0005…`): a counter byte (0, 1, … 255,
/// 0, … from the first packet of a transfer) and data bytes.
public struct HuamiDataPacket: Sendable, Hashable {
    public var counter: UInt8
    public var data: [UInt8]

    public init(counter: UInt8, data: [UInt8]) {
        self.counter = counter
        self.data = data
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 2 else { throw HuamiError(.tooShort, "an activity data packet has a counter and data, \(raw.count) bytes is too short") }
        counter = raw[0]
        data = Array(raw[1...])
    }

    public var bytes: [UInt8] { [counter] + data }

    /// A transfer's data as the band sends it: `perPacket` data bytes a packet (16 by default: a
    /// Mi Band 4 sends a counter and four 4-byte samples a notification, satcar77/miband4), counters from 0.
    public static func packets(_ data: [UInt8], perPacket: Int = 16) -> [HuamiDataPacket] {
        let size = max(1, perPacket)
        var out: [HuamiDataPacket] = []
        var at = 0
        while at < data.count {
            let end = min(at + size, data.count)
            out.append(HuamiDataPacket(counter: UInt8(truncatingIfNeeded: out.count), data: Array(data[at..<end])))
            at = end
        }
        return out
    }
}

/// Joins a transfer's data packets (protocol-spec/huami/huami.md §7.4): orders them by counter within
/// a window (notifications may arrive out of order under EATT), and checks the count the band
/// announced and, when asked to, the CRC-32 at the end.
public struct HuamiFetchAssembler: Sendable {
    /// The data bytes announced by the start answer.
    public let expectedBytes: Int
    public let format: HuamiSampleFormat
    /// How many packets may arrive ahead of one still missing before it counts as lost.
    public let reorderWindow: Int
    /// The data bytes in order, so far.
    public private(set) var data: [UInt8] = []
    /// Packets taken, in order or held.
    public private(set) var packets = 0
    /// Packets that arrived ahead of their turn.
    public private(set) var reordered = 0
    var next: UInt8 = 0
    var held: [UInt8: [UInt8]] = [:]
    /// Packets taken in order (held ones not yet).
    var taken = 0
    /// The most data bytes one packet carried: every packet but a transfer's last is that full.
    var fullPacket = 0

    /// The default window: under EATT whole batches of notifications overtake one (the e2e
    /// journey `huami` saw packet 112 arrive while 0 was missing, and 168 packets come while 102
    /// was missing). A counter is one byte, so a packet is told ahead from one that came again by
    /// the announced count (see `feed`); 254 keeps a held packet from ever sharing the counter of
    /// the one awaited.
    public static let defaultReorderWindow = 254

    public init(count: UInt32, format: HuamiSampleFormat, reorderWindow: Int = Self.defaultReorderWindow) throws(HuamiError) {
        guard Int(count) % format.size == 0 else {
            throw HuamiError(.countNotWholeSamples, "the band announces \(count) data bytes, not a whole number of \(format.size)-byte samples")
        }
        expectedBytes = Int(count)
        self.format = format
        self.reorderWindow = max(0, min(reorderWindow, 254))
    }

    /// True when every announced byte is there and no packet is held.
    public var isComplete: Bool { data.count == expectedBytes && held.isEmpty }

    /// Takes one data packet. A counter `d` ahead of the one awaited is a packet of this transfer
    /// only if the announced count leaves `d` more packets (each as full as the fullest yet);
    /// otherwise it lies behind, among those taken (`counterRepeated`), or past the transfer's end
    /// (`counterSkipped`): the one-byte counter alone cannot tell 168 ahead from 88 behind.
    public mutating func feed(_ notification: some Collection<UInt8>) throws(HuamiError) {
        let packet = try HuamiDataPacket(bytes: notification)
        fullPacket = max(fullPacket, packet.data.count)
        let distance = Int(packet.counter &- next)
        if distance == 0 {
            append(packet.data)
            while let waiting = held.removeValue(forKey: next) { append(waiting) }
        } else if held[packet.counter] != nil {
            throw HuamiError(.counterRepeated, "packet counter \(packet.counter) came again (it is held already; the next expected is \(next))")
        } else if distance >= packetsLeft {
            if 256 - distance <= taken {
                throw HuamiError(.counterRepeated, "packet counter \(packet.counter) came again (the next expected is \(next))")
            }
            throw HuamiError(.counterSkipped, "packet counter \(packet.counter) lies past the \(expectedBytes) data bytes the band announced (the next expected is \(next))")
        } else if distance > reorderWindow || held.count >= reorderWindow {
            throw HuamiError(.counterSkipped, "packet counter \(packet.counter) came while \(next) is missing")
        } else {
            held[packet.counter] = packet.data
            reordered += 1
        }
        packets += 1
        let total = data.count + held.values.reduce(0) { $0 + $1.count }
        guard total <= expectedBytes else {
            throw HuamiError(.countMismatch, "the band announced \(expectedBytes) data bytes but sent \(total) or more")
        }
    }

    /// The packets the announced count leaves from the awaited one on, each as full as the fullest yet.
    var packetsLeft: Int {
        let left = expectedBytes - data.count
        return left <= 0 ? 0 : (left + fullPacket - 1) / fullPacket
    }

    mutating func append(_ bytes: [UInt8]) {
        data += bytes
        next &+= 1
        taken += 1
    }

    /// The data, once the band said the transfer is done: every packet there (`counterSkipped`
    /// otherwise), every announced byte (`transferEndedEarly`); with `verifyCRC`, a CRC-32 the
    /// band sent must match the data (`crcMismatch`).
    public func finish(crc32: UInt32? = nil, verifyCRC: Bool = false) throws(HuamiError) -> [UInt8] {
        guard held.isEmpty else {
            throw HuamiError(.counterSkipped, "the transfer ended while packet \(next) is missing (\(held.count) came after it)")
        }
        guard data.count == expectedBytes else { throw abandoned() }
        if verifyCRC, let crc32, CRC32.checksum(data) != crc32 {
            throw HuamiError(.crcMismatch, "the band's CRC-32 is \(String(crc32, radix: 16)), the data's \(String(CRC32.checksum(data), radix: 16))")
        }
        return data
    }

    /// The error for a transfer that stopped before its announced bytes (the band said it is done,
    /// or the caller's timeout ran out).
    public func abandoned() -> HuamiError {
        HuamiError(.transferEndedEarly, "the transfer stopped after \(data.count) of the \(expectedBytes) data bytes the band announced")
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, init and final xor 0xFFFFFFFF): the check
/// value of `123456789` is 0xCBF43926.
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
