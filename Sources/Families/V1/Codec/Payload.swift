import TSGATT
import TSModels

/// A payload layout of wire-protocol.md §6. Decoding reads every field, then checks the
/// rules; encoding checks the same rules first, so nothing invalid is ever sent.
public protocol Payload: Sendable, Hashable, Codable {
    init(from reader: inout ByteReader) throws(ProtocolError)
    func write(to writer: inout ByteWriter) throws(ProtocolError)
}

extension Payload {
    public init(payload: [UInt8], name: String) throws(ProtocolError) {
        var reader = ByteReader(payload)
        self = try Self(from: &reader)
        try reader.finish(name)
    }

    public func encodedPayload() throws(ProtocolError) -> [UInt8] {
        var writer = ByteWriter()
        try write(to: &writer)
        return writer.bytes
    }
}

/// The body of messages with an empty payload.
public struct EmptyPayload: Payload {
    public init() {}
    public init(from reader: inout ByteReader) throws(ProtocolError) {}
    public func write(to writer: inout ByteWriter) throws(ProtocolError) {}
}

func outOfRange(_ field: String, _ value: some BinaryInteger, _ range: String) -> ProtocolError {
    ProtocolError(.valueOutOfRange, "\(field) \(value) is out of range \(range)")
}

func checkReserved(_ value: UInt8, allowed: UInt8, _ field: String) throws(ProtocolError) {
    guard value & ~allowed == 0 else {
        throw ProtocolError(.reservedBitsSet, "\(field) 0x\(String(value, radix: 16)) sets reserved bits 0x\(String(value & ~allowed, radix: 16))")
    }
}

// MARK: HELLO

public struct HelloRequest: Payload {
    public var minVersion: UInt8
    public var maxVersion: UInt8
    public var attMTU: UInt16
    public var maxPayload: UInt16

    public init(minVersion: UInt8 = 1, maxVersion: UInt8 = 1, attMTU: UInt16, maxPayload: UInt16 = UInt16(Frame.maxPayload)) {
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.attMTU = attMTU
        self.maxPayload = maxPayload
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        minVersion = try reader.u8("minVersion")
        maxVersion = try reader.u8("maxVersion")
        attMTU = try reader.u16("attMtu")
        maxPayload = try reader.u16("maxPayload")
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u8(minVersion); writer.u8(maxVersion); writer.u16(attMTU); writer.u16(maxPayload)
    }

    func validate() throws(ProtocolError) {
        guard minVersion >= 1 else { throw outOfRange("minVersion", minVersion, "1…255") }
        guard maxVersion >= minVersion else { throw outOfRange("maxVersion", maxVersion, "\(minVersion)…255 (at least minVersion)") }
        guard (ATTMTU.minimum...ATTMTU.maximum).contains(Int(attMTU)) else { throw outOfRange("attMtu", attMTU, "23…517") }
        guard (256...Frame.maxPayload).contains(Int(maxPayload)) else { throw outOfRange("maxPayload", maxPayload, "256…2048") }
    }
}

public struct HelloResponse: Payload {
    public var version: UInt8
    public var maxPayload: UInt16
    public var maxWindow: UInt8
    /// Every command id the watch implements.
    public var commands: [UInt16]

    public init(version: UInt8 = 1, maxPayload: UInt16 = UInt16(Frame.maxPayload), maxWindow: UInt8, commands: [UInt16]) {
        self.version = version
        self.maxPayload = maxPayload
        self.maxWindow = maxWindow
        self.commands = commands
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        version = try reader.u8("version")
        maxPayload = try reader.u16("maxPayload")
        maxWindow = try reader.u8("maxWindow")
        let count = Int(try reader.u8("command count"))
        commands = []
        for index in 0..<count { commands.append(try reader.u16("command \(index)")) }
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u8(version); writer.u16(maxPayload); writer.u8(maxWindow)
        writer.u8(UInt8(commands.count))
        for command in commands { writer.u16(command) }
    }

    func validate() throws(ProtocolError) {
        guard version >= 1 else { throw outOfRange("version", version, "1…255") }
        guard (256...Frame.maxPayload).contains(Int(maxPayload)) else { throw outOfRange("maxPayload", maxPayload, "256…2048") }
        guard (1...32).contains(maxWindow) else { throw outOfRange("maxWindow", maxWindow, "1…32") }
        guard commands.count <= 255 else { throw outOfRange("command count", commands.count, "0…255") }
    }
}

// MARK: DEVICE_INFO, TIME_SET, BATTERY

extension DeviceInfoPayload: Payload {
    static let textLimit = 32

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let model = try reader.string("model", limit: Self.textLimit)
        let firmware = try reader.string("firmware", limit: Self.textLimit)
        let maxAlarms = try reader.u8("maxAlarms")
        let labelMax = try reader.u8("labelMaxBytes")
        let remarkMax = try reader.u8("remarkMaxBytes")
        let ruleValue = try reader.u8("statisticsRule")
        let features = try reader.u8("features")
        let monitorBits = try reader.u8("monitorTypes")
        guard labelMax <= Alarm.maxLabelBytes else { throw outOfRange("labelMaxBytes", labelMax, "0…32") }
        guard let rule = StatisticsRule(rawValue: ruleValue) else { throw outOfRange("statisticsRule", ruleValue, "0…3") }
        try checkReserved(features, allowed: 0b111, "features")
        try checkReserved(monitorBits, allowed: 0b11_1111, "monitorTypes")
        self.init(model: model, firmware: firmware, capabilities: DeviceInfoCapabilities(
            maxAlarms: Int(maxAlarms), labelMaxBytes: Int(labelMax), remarkMaxBytes: Int(remarkMax), statisticsRule: rule,
            supportsNaps: features & 1 != 0, deletesSyncedRecords: features & 2 != 0, supportsLiveSleep: features & 4 != 0,
            monitorTypes: MonitorType.allCases.filter { monitorBits & (1 << $0.rawValue) != 0 }))
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        let caps = capabilities
        guard (0...255).contains(caps.maxAlarms) else { throw outOfRange("maxAlarms", caps.maxAlarms, "0…255") }
        guard (0...Alarm.maxLabelBytes).contains(caps.labelMaxBytes) else { throw outOfRange("labelMaxBytes", caps.labelMaxBytes, "0…32") }
        guard (0...255).contains(caps.remarkMaxBytes) else { throw outOfRange("remarkMaxBytes", caps.remarkMaxBytes, "0…255") }
        try writer.string(model, "model", limit: Self.textLimit)
        try writer.string(firmware, "firmware", limit: Self.textLimit)
        writer.u8(UInt8(caps.maxAlarms)); writer.u8(UInt8(caps.labelMaxBytes)); writer.u8(UInt8(caps.remarkMaxBytes))
        writer.u8(caps.statisticsRule.rawValue)
        writer.u8((caps.supportsNaps ? 1 : 0) | (caps.deletesSyncedRecords ? 2 : 0) | (caps.supportsLiveSleep ? 4 : 0))
        writer.u8(caps.monitorTypes.reduce(0) { $0 | 1 << $1.rawValue })
    }
}

public struct TimeSet: Payload {
    public var utc: UInt32
    /// Seconds east of UTC in effect at `utc`.
    public var utcOffset: Int32
    /// IANA zone name, e.g. `Europe/Berlin`; nil when not given.
    public var zone: String?

    public init(utc: UInt32, utcOffset: Int32, zone: String?) {
        self.utc = utc
        self.utcOffset = utcOffset
        self.zone = zone
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        utc = try reader.u32("utc")
        utcOffset = try reader.i32("utcOffset")
        let name = try reader.string("zone", limit: 64)
        zone = name.isEmpty ? nil : name
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u32(utc); writer.i32(utcOffset)
        try writer.string(zone ?? "", "zone", limit: 64)
    }

    func validate() throws(ProtocolError) {
        guard (-64_800...64_800).contains(utcOffset) else { throw outOfRange("utcOffset", utcOffset, "-64800…64800 seconds") }
    }
}

extension BatteryStatus: Payload {
    public init(from reader: inout ByteReader) throws(ProtocolError) {
        let level = try reader.u8("level")
        let stateValue = try reader.u8("state")
        guard level <= 100 else { throw outOfRange("battery level", level, "0…100") }
        guard Int(stateValue) < BatteryState.allCases.count else { throw outOfRange("battery state", stateValue, "0…3") }
        self.init(level: level, state: BatteryState.allCases[Int(stateValue)])
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        guard level <= 100 else { throw outOfRange("battery level", level, "0…100") }
        writer.u8(level)
        writer.u8(UInt8(BatteryState.allCases.firstIndex(of: state) ?? 0))
    }
}
