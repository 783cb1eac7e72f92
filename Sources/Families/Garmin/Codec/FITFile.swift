import Foundation

/// A FIT file as read (protocol-spec/garmin/garmin.md §9): its header and its data messages in
/// order, each with the fields its definition gave it. Definitions themselves are not kept: they
/// only say how the data messages are laid out.
public struct FITFile: Sendable, Hashable {
    public var header: FITHeader
    public var messages: [FITMessage]

    public init(header: FITHeader, messages: [FITMessage]) {
        self.header = header
        self.messages = messages
    }

    /// The file's type (file_id, global 0, field 0): 32 monitoring, 49 sleep, 2 settings, ….
    public var fileType: UInt64? { messages.first { $0.global == FITGlobal.fileID }?.unsigned(0) }
}

public struct FITHeader: Sendable, Hashable {
    /// 12, or 14 with a header CRC.
    public var size: UInt8
    public var protocolVersion: UInt8
    public var profileVersion: UInt16
    public var dataSize: UInt32

    public init(size: UInt8 = 14, protocolVersion: UInt8 = 0x20, profileVersion: UInt16 = 2132, dataSize: UInt32 = 0) {
        self.size = size
        self.protocolVersion = protocolVersion
        self.profileVersion = profileVersion
        self.dataSize = dataSize
    }
}

/// FIT's base types (§9): the byte a definition gives each field.
public enum FITBaseType: UInt8, Sendable, Hashable, CaseIterable {
    case enumeration = 0x00, sint8 = 0x01, uint8 = 0x02, sint16 = 0x83, uint16 = 0x84, sint32 = 0x85, uint32 = 0x86
    case string = 0x07, float32 = 0x88, float64 = 0x89, uint8z = 0x0A, uint16z = 0x8B, uint32z = 0x8C, byte = 0x0D
    case sint64 = 0x8E, uint64 = 0x8F, uint64z = 0x90

    /// Bytes of one value.
    public var size: Int {
        switch self {
        case .enumeration, .sint8, .uint8, .string, .uint8z, .byte: 1
        case .sint16, .uint16, .uint16z: 2
        case .sint32, .uint32, .uint32z, .float32: 4
        case .float64, .sint64, .uint64, .uint64z: 8
        }
    }

    var isSigned: Bool { [.sint8, .sint16, .sint32, .sint64].contains(self) }
    var isFloat: Bool { self == .float32 || self == .float64 }
    /// The z types' invalid value is 0 rather than all ones.
    var zeroIsInvalid: Bool { [.uint8z, .uint16z, .uint32z, .uint64z].contains(self) }

    /// The raw bits that mean "no value": all ones (the largest positive for signed types), 0 for z types.
    var invalidBits: UInt64 {
        if zeroIsInvalid { return 0 }
        let bits = UInt64(size * 8)
        let all: UInt64 = bits == 64 ? .max : (1 << bits) - 1
        return isSigned ? all >> 1 : all
    }
}

/// One field's value. Numbers that are the base type's invalid value read as `invalid`.
public enum FITValue: Sendable, Hashable {
    case unsigned(UInt64)
    case signed(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case array([FITValue])
    case invalid
}

/// A developer field's bytes, as the file gave them (the project reads none).
public struct FITDeveloperValue: Sendable, Hashable {
    public var number: UInt8
    public var developerIndex: UInt8
    public var bytes: [UInt8]

    public init(number: UInt8, developerIndex: UInt8, bytes: [UInt8]) {
        self.number = number
        self.developerIndex = developerIndex
        self.bytes = bytes
    }
}

public struct FITMessage: Sendable, Hashable {
    /// The global message number: 0 file_id, 55 monitoring, 275 sleep_level, ….
    public var global: UInt16
    /// Field number → value, the timestamp (253) of a compressed header included.
    public var fields: [UInt8: FITValue]
    public var developerFields: [FITDeveloperValue]

    public init(global: UInt16, fields: [UInt8: FITValue], developerFields: [FITDeveloperValue] = []) {
        self.global = global
        self.fields = fields
        self.developerFields = developerFields
    }

    /// An unsigned or non-negative signed value; nil when absent, invalid or not a single number.
    public func unsigned(_ field: UInt8) -> UInt64? {
        switch fields[field] {
        case let .unsigned(value): value
        case let .signed(value) where value >= 0: UInt64(value)
        default: nil
        }
    }

    /// The timestamp (field 253) in Garmin seconds.
    public var timestamp: UInt32? { unsigned(FITField.timestamp).map { UInt32(truncatingIfNeeded: $0) } }
}

/// Global message numbers the project reads or writes (§9, §10).
public enum FITGlobal {
    public static let fileID: UInt16 = 0
    public static let deviceSettings: UInt16 = 2
    public static let event: UInt16 = 21
    public static let monitoring: UInt16 = 55
    public static let monitoringInfo: UInt16 = 103
    public static let alarmSettings: UInt16 = 222
    public static let sleepLevel: UInt16 = 275
    public static let sleepAssessment: UInt16 = 346
}

public enum FITField {
    public static let timestamp: UInt8 = 253
}

/// FIT file types (file_id field 0; the directory's subtype, §8.4).
public enum FITFileType {
    public static let settings: UInt64 = 2
    public static let monitoring: UInt64 = 32
    public static let sleep: UInt64 = 49
}

/// Garmin seconds (since 1989-12-31T00:00:00Z) and Unix seconds.
public enum GarminTime {
    public static let epochOffset: Int64 = 631_065_600

    public static func unix(_ garmin: UInt32) -> Int64 { Int64(garmin) + epochOffset }

    /// Nil before the Garmin epoch or past what 32 bits hold.
    public static func garmin(_ unix: Int64) -> UInt32? { UInt32(exactly: unix - epochOffset) }
}
