import TSModels

/// One alarm slot as the band holds it (protocol-spec/huami/huami.md §4): ten slots, no labels.
public struct HuamiAlarm: Sendable, Hashable {
    public static let slots = 10
    /// What an alarm table must fit to go onto a band: 10 alarms, no label, no remark, no smart wake.
    public static let limits = AlarmLimits(maxAlarms: slots, labelMaxBytes: 0, remarkMaxBytes: 0, maxSmartWindow: 0)

    public static let enabledFlag: UInt8 = 0x80
    public static let noSnoozeFlag: UInt8 = 0x40
    public static let onceDays: UInt8 = 0x80

    public var slot: UInt8
    public var isEnabled: Bool
    /// A disabled alarm carries no snooze bit (Gadgetbridge sets 0x40 only on enabled ones): it reads back as true.
    public var snoozeAllowed: Bool
    public var hour: UInt8
    public var minute: UInt8
    public var repeatDays: AlarmRepeat

    public init(slot: UInt8, isEnabled: Bool = true, snoozeAllowed: Bool = true, hour: UInt8, minute: UInt8, repeatDays: AlarmRepeat = .once) {
        self.slot = slot
        self.isEnabled = isEnabled
        self.snoozeAllowed = snoozeAllowed
        self.hour = hour
        self.minute = minute
        self.repeatDays = repeatDays
    }

    /// The band's form of a project alarm; its label and remark are not sent (the central refuses
    /// a table with them first, with `limits`).
    public init(_ alarm: Alarm) throws(HuamiError) {
        guard Int(alarm.slot) < Self.slots else { throw HuamiError(.slotOutOfRange, "alarm slot \(alarm.slot): a band has slots 0 … 9") }
        guard alarm.hour <= 23, alarm.minute <= 59 else {
            throw HuamiError(.timeOutOfRange, "alarm in slot \(alarm.slot): \(alarm.hour):\(alarm.minute) is not a time of day")
        }
        guard alarm.repeatDays.isValid else {
            throw HuamiError(.timeOutOfRange, "alarm in slot \(alarm.slot): repeat mask \(hex(alarm.repeatDays.rawValue)) uses bit 7")
        }
        self.init(slot: alarm.slot, isEnabled: alarm.isEnabled, snoozeAllowed: alarm.snoozeAllowed, hour: alarm.hour, minute: alarm.minute,
                  repeatDays: alarm.repeatDays)
    }

    public var alarm: Alarm {
        Alarm(slot: slot, hour: hour, minute: minute, isEnabled: isEnabled, snoozeAllowed: snoozeAllowed, repeatDays: repeatDays)
    }

    /// `[flags | slot, hour, minute, days]`: the body of a set request and of an alarm-table entry.
    var entry: [UInt8] {
        var flags = slot & 0x0F
        if isEnabled { flags |= Self.enabledFlag | (snoozeAllowed ? 0 : Self.noSnoozeFlag) }
        return [flags, hour, minute, repeatDays == .once ? Self.onceDays : repeatDays.rawValue]
    }

    /// Reads `[flags | slot, hour, minute, days]`; nil for a cleared slot (flags and days 0).
    static func read(entry: ArraySlice<UInt8>) throws(HuamiError) -> (slot: UInt8, alarm: HuamiAlarm?) {
        let e = Array(entry)
        let slot = e[0] & 0x0F
        guard Int(slot) < slots else { throw HuamiError(.valueOutOfRange, "alarm slot \(slot): a band has slots 0 … 9") }
        guard e[0] & 0x30 == 0 else { throw HuamiError(.invalidValue, "alarm flags \(hex(e[0])) use bits 0x30, which no source names") }
        if e[0] & 0xF0 == 0 && e[3] == 0 { return (slot, nil) }
        guard e[1] <= 23, e[2] <= 59 else { throw HuamiError(.valueOutOfRange, "alarm in slot \(slot): \(e[1]):\(e[2]) is not a time of day") }
        let days: AlarmRepeat
        switch e[3] {
        case onceDays: days = .once
        case 0x01...0x7F: days = AlarmRepeat(rawValue: e[3])
        default: throw HuamiError(.invalidValue, "alarm in slot \(slot): days \(hex(e[3])) are neither 0x80 (once) nor Monday … Sunday bits")
        }
        let enabled = e[0] & enabledFlag != 0
        guard enabled || e[0] & noSnoozeFlag == 0 else {
            throw HuamiError(.invalidValue, "alarm in slot \(slot): the no-snooze flag is set on a disabled alarm")
        }
        return (slot, HuamiAlarm(slot: slot, isEnabled: enabled, snoozeAllowed: e[0] & noSnoozeFlag == 0, hour: e[1], minute: e[2], repeatDays: days))
    }
}

/// Whether a slot holds an alarm and whether it is on, from the status answer (`10 0D 01 …`).
public struct HuamiAlarmStatus: Sendable, Hashable {
    public var slot: UInt8
    public var isEnabled: Bool

    public init(slot: UInt8, isEnabled: Bool) {
        self.slot = slot
        self.isEnabled = isEnabled
    }
}

/// What the central writes to the configuration characteristic (`…0003…`).
public enum HuamiConfigRequest: Sendable, Hashable {
    /// `[02, flags | slot, hour, minute, days]`.
    case setAlarm(HuamiAlarm)
    /// `[02, slot, 00, 00, 00]`: the slot holds no alarm.
    case clearAlarm(slot: UInt8)
    /// `[0D]`: which slots hold an alarm, and which are on.
    case alarmStatus
    /// `[FF 01 00 00 00]`: the alarms with their times, answered in chunks.
    case alarmTable

    public static let alarmOpcode: UInt8 = 0x02
    public static let alarmStatusOpcode: UInt8 = 0x0D
    public static let alarmTableBytes: [UInt8] = [0xFF, 0x01, 0x00, 0x00, 0x00]

    public var bytes: [UInt8] {
        switch self {
        case let .setAlarm(alarm): [Self.alarmOpcode] + alarm.entry
        case let .clearAlarm(slot): [Self.alarmOpcode, slot, 0, 0, 0]
        case .alarmStatus: [Self.alarmStatusOpcode]
        case .alarmTable: Self.alarmTableBytes
        }
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard let opcode = raw.first else { throw HuamiError(.tooShort, "an empty configuration request") }
        switch opcode {
        case Self.alarmOpcode:
            guard raw.count == 5 else { throw HuamiError(.badLength, "an alarm request has 5 bytes, not \(raw.count)") }
            let (slot, alarm) = try HuamiAlarm.read(entry: raw[1...])
            // A cleared slot's time means nothing (Gadgetbridge writes the old one, miband2 00:00).
            self = alarm.map { .setAlarm($0) } ?? .clearAlarm(slot: slot)
        case Self.alarmStatusOpcode:
            guard raw.count == 1 else { throw HuamiError(.badLength, "an alarm status request has 1 byte, not \(raw.count)") }
            self = .alarmStatus
        case 0xFF:
            guard raw == Self.alarmTableBytes else { throw HuamiError(.invalidValue, "ff … is the alarm table request only as ff 01 00 00 00") }
            self = .alarmTable
        default:
            throw HuamiError(.unknownOpcode, "configuration request opcode \(hex(opcode)) is none of 02, 0d, ff")
        }
    }
}

/// A chunk of a long configuration answer: `80 01 <flags> …` (protocol-spec/huami/huami.md §4.3).
public struct HuamiConfigChunk: Sendable, Hashable {
    public enum Position: UInt8, Sendable, Hashable {
        case first = 0x00, middle = 0x40, last = 0x80, complete = 0xC0
    }

    public var position: Position
    /// The answer's type (byte 4 of a first or complete chunk; 0x01 = the alarm table); nil on middle and last chunks.
    public var type: UInt8?
    public var payload: [UInt8]

    public init(position: Position, type: UInt8? = nil, payload: [UInt8]) {
        self.position = position
        self.type = type
        self.payload = payload
    }

    public static let marker: [UInt8] = [0x80, 0x01]

    /// First and complete chunks: `80 01 flags 00 type 00 00 00` + payload; middle and last: `80 01 flags 00` + payload.
    public var bytes: [UInt8] {
        switch position {
        case .first, .complete: Self.marker + [position.rawValue, 0, type ?? 0, 0, 0, 0] + payload
        case .middle, .last: Self.marker + [position.rawValue, 0] + payload
        }
    }

    init(raw: [UInt8]) throws(HuamiError) {
        guard raw.count >= 4 else { throw HuamiError(.tooShort, "a configuration chunk has at least 4 bytes, not \(raw.count)") }
        guard let position = Position(rawValue: raw[2]) else {
            throw HuamiError(.invalidValue, "chunk flags \(hex(raw[2])) are none of 00 (first), 40, 80 (last), c0 (complete)")
        }
        self.position = position
        switch position {
        case .first, .complete:
            guard raw.count >= 8 else { throw HuamiError(.tooShort, "a first configuration chunk has at least 8 bytes, not \(raw.count)") }
            type = raw[4]
            payload = Array(raw[8...])
        case .middle, .last:
            type = nil
            payload = Array(raw[4...])
        }
    }
}

/// What the band notifies on the configuration characteristic.
public enum HuamiConfigAnswer: Sendable, Hashable {
    /// `10 02 <status>`: an alarm was set (status 01).
    case alarmSet(status: UInt8)
    /// `10 0D 01`, 5 bytes no source reads, the count, then a byte per alarm: slot in the low
    /// nibble, 0x10 = enabled.
    case alarmStatus([HuamiAlarmStatus])
    /// `80 01 …`: a chunk of a long answer (`HuamiConfigChunkAssembler`).
    case chunk(HuamiConfigChunk)
    /// Another `10 <opcode> <status> …` answer, kept as it came.
    case other(opcode: UInt8, status: UInt8, rest: [UInt8])

    public static let statusEnabledFlag: UInt8 = 0x10

    public var bytes: [UInt8] {
        switch self {
        case let .alarmSet(status): [responseMarker, HuamiConfigRequest.alarmOpcode, status]
        case let .alarmStatus(slots):
            [responseMarker, HuamiConfigRequest.alarmStatusOpcode, statusSuccess, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: slots.count)]
                + slots.map { ($0.slot & 0x0F) | ($0.isEnabled ? Self.statusEnabledFlag : 0) }
        case let .chunk(chunk): chunk.bytes
        case let .other(opcode, status, rest): [responseMarker, opcode, status] + rest
        }
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 2 else { throw HuamiError(.tooShort, "a configuration answer has \(raw.count) bytes, at least 2 expected") }
        if Array(raw.prefix(2)) == HuamiConfigChunk.marker {
            self = .chunk(try HuamiConfigChunk(raw: raw))
            return
        }
        guard raw[0] == responseMarker else { throw HuamiError(.notAResponse, "a configuration answer starts with 10 or 80 01, not \(hex(raw[0]))") }
        guard raw.count >= 3 else { throw HuamiError(.tooShort, "a configuration answer has \(raw.count) bytes, at least 3 expected") }
        switch raw[1] {
        case HuamiConfigRequest.alarmOpcode:
            guard raw.count == 3 else { throw HuamiError(.badLength, "an alarm-set answer has 3 bytes, not \(raw.count)") }
            self = .alarmSet(status: raw[2])
        case HuamiConfigRequest.alarmStatusOpcode where raw[2] == statusSuccess:
            guard raw.count >= 9 else { throw HuamiError(.tooShort, "an alarm status answer has at least 9 bytes, not \(raw.count)") }
            let count = Int(raw[8])
            guard raw.count == 9 + count else {
                throw HuamiError(.countMismatch, "the alarm status answer announces \(count) alarms but carries \(raw.count - 9)")
            }
            var slots: [HuamiAlarmStatus] = []
            for byte in raw[9...] {
                guard byte & 0x0F < HuamiAlarm.slots else { throw HuamiError(.valueOutOfRange, "alarm slot \(byte & 0x0F): a band has slots 0 … 9") }
                guard byte & 0xE0 == 0 else { throw HuamiError(.invalidValue, "alarm status byte \(hex(byte)) uses bits other than the slot and 0x10") }
                slots.append(HuamiAlarmStatus(slot: byte & 0x0F, isEnabled: byte & Self.statusEnabledFlag != 0))
            }
            self = .alarmStatus(slots)
        default:
            self = .other(opcode: raw[1], status: raw[2], rest: Array(raw[3...]))
        }
    }
}

/// Joins `80 01` chunks into one answer (Gadgetbridge's reassembly): a first chunk starts it
/// (dropping one in progress), middle chunks add to it, a last or complete chunk ends it.
public struct HuamiConfigChunkAssembler: Sendable {
    public static let maxPayload = 4096
    var type: UInt8?
    var buffer: [UInt8] = []

    public init() {}

    /// The whole answer `(type, payload)` when `chunk` ends one; nil while it goes on.
    public mutating func feed(_ chunk: HuamiConfigChunk) throws(HuamiError) -> (type: UInt8, payload: [UInt8])? {
        switch chunk.position {
        case .complete:
            type = nil
            buffer = []
            return (chunk.type ?? 0, chunk.payload)
        case .first:
            type = chunk.type
            buffer = chunk.payload
            return nil
        case .middle, .last:
            guard let type else { throw HuamiError(.chunkOutOfOrder, "a \(chunk.position == .last ? "last" : "middle") chunk came before a first one") }
            buffer += chunk.payload
            guard buffer.count <= Self.maxPayload else {
                self.type = nil
                buffer = []
                throw HuamiError(.badLength, "a chunked answer grew past \(Self.maxPayload) bytes")
            }
            guard chunk.position == .last else { return nil }
            let whole = (type, buffer)
            self.type = nil
            buffer = []
            return whole
        }
    }
}

/// The alarm table (chunked answer of type 0x01 to `ff 01 00 00 00`): one byte no source reads
/// (the project writes the count), then `[flags | slot, hour, minute, days]` per alarm.
public enum HuamiAlarmTable {
    public static let chunkType: UInt8 = 0x01

    public static func alarms(payload: [UInt8]) throws(HuamiError) -> [HuamiAlarm] {
        guard !payload.isEmpty, (payload.count - 1) % 4 == 0 else {
            throw HuamiError(.badLength, "an alarm table is 1 + 4 × n bytes, not \(payload.count)")
        }
        var alarms: [HuamiAlarm] = []
        var seen = Set<UInt8>()
        var at = 1
        while at < payload.count {
            let (slot, alarm) = try HuamiAlarm.read(entry: payload[at..<at + 4])
            guard seen.insert(slot).inserted else { throw HuamiError(.invalidValue, "alarm slot \(slot) appears twice in the alarm table") }
            if let alarm { alarms.append(alarm) }
            at += 4
        }
        return alarms
    }

    public static func payload(_ alarms: [HuamiAlarm]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: alarms.count)] + alarms.flatMap(\.entry)
    }

    /// The table as chunks of at most `chunkPayload` bytes each (the simulated band's answer).
    public static func chunks(_ alarms: [HuamiAlarm], chunkPayload: Int = 12) -> [HuamiConfigChunk] {
        let data = payload(alarms)
        let size = max(1, chunkPayload)
        if data.count <= size { return [HuamiConfigChunk(position: .complete, type: chunkType, payload: data)] }
        var out = [HuamiConfigChunk(position: .first, type: chunkType, payload: Array(data[0..<size]))]
        var at = size
        while at < data.count {
            let end = min(at + size, data.count)
            out.append(HuamiConfigChunk(position: end == data.count ? .last : .middle, payload: Array(data[at..<end])))
            at = end
        }
        return out
    }
}
