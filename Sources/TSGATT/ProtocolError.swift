import TSModels

/// A defect in bytes received or in a value about to be sent: which rule was broken (`code`,
/// stable, used by the test vectors) and a sentence for people (`message`).
public struct ProtocolError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var category: ErrorCategory { .protocolError }

    public enum Code: String, Sendable, Hashable, CaseIterable {
        case badStartMarker, unsupportedVersion, payloadTooLarge, truncatedFrame, lengthMismatch, crcMismatch
        case unknownCommand, unexpectedDirection, truncatedPayload, trailingBytes, invalidUTF8, stringTooLong
        case labelTooLong, hourOutOfRange, minuteOutOfRange, reservedBitsSet, duplicateSlot
        case unknownMonitorType, unknownSleepStage
        case windowStartOutOfRange, windowEndOutOfRange, windowEndNotAfterStart
        case intervalNotMultipleOf5, intervalOutOfRange, alertLimitsInverted
        case rangeEndNotAfterStart, valueOutOfRange, zeroDuration, emptyPage
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The status a watch puts in its ERROR response for this defect (wire-protocol.md §5).
    public var status: StatusCode {
        switch code {
        case .crcMismatch: .crcMismatch
        case .unknownCommand: .unknownCommand
        case .unsupportedVersion: .unsupportedVersion
        case .truncatedPayload, .trailingBytes, .truncatedFrame, .lengthMismatch, .payloadTooLarge: .badLength
        default: .invalidValue
        }
    }
}

/// Status codes carried in ERROR frames (wire-protocol.md §5). Unknown codes are kept as they
/// are so that a newer watch's code can still be shown; treat them as `internal`.
public struct StatusCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let crcMismatch = StatusCode(rawValue: 0x01)
    public static let unknownCommand = StatusCode(rawValue: 0x02)
    public static let badLength = StatusCode(rawValue: 0x03)
    public static let invalidValue = StatusCode(rawValue: 0x04)
    public static let unsupportedVersion = StatusCode(rawValue: 0x05)
    public static let busy = StatusCode(rawValue: 0x06)
    public static let helloRequired = StatusCode(rawValue: 0x07)
    public static let limitExceeded = StatusCode(rawValue: 0x08)
    public static let notSupported = StatusCode(rawValue: 0x09)
    public static let unknownTransfer = StatusCode(rawValue: 0x0A)
    public static let countMismatch = StatusCode(rawValue: 0x0B)
    public static let `internal` = StatusCode(rawValue: 0x0C)

    static let names: [UInt8: String] = [
        0x01: "crcMismatch", 0x02: "unknownCommand", 0x03: "badLength", 0x04: "invalidValue",
        0x05: "unsupportedVersion", 0x06: "busy", 0x07: "helloRequired", 0x08: "limitExceeded",
        0x09: "notSupported", 0x0A: "unknownTransfer", 0x0B: "countMismatch", 0x0C: "internal",
    ]

    /// The name used in JSON; `status0xNN` for a code this version does not know.
    public var name: String { Self.names[rawValue] ?? "status0x" + String(rawValue, radix: 16) }

    public init?(name: String) {
        if let known = Self.names.first(where: { $0.value == name }) {
            self.init(rawValue: known.key)
        } else if name.hasPrefix("status0x"), let value = UInt8(name.dropFirst(8), radix: 16) {
            self.init(rawValue: value)
        } else {
            return nil
        }
    }

    public var description: String { name }
}

extension StatusCode: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let code = StatusCode(name: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown status \"\(name)\"")
        }
        self = code
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
