import TSModels

/// A defect in bytes from a Garmin watch (or, for the simulated watch, from the central): which
/// rule was broken (`code`, stable, named by the test vectors in protocol-spec/garmin/vectors/)
/// and a sentence for people.
public struct GarminError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // COBS and the GFDI frame (protocol-spec/garmin/garmin.md §3)
        case cobsMalformed, frameTooShort, lengthMismatch, crcMismatch, frameTooLong
        // multi-link control messages (§2.1)
        case controlTooShort, unknownControl
        // payloads
        case payloadTooShort, stringTooLong, invalidUTF8
        // FIT files (§9)
        case fitHeaderInvalid, fitHeaderCRCMismatch, fitCRCMismatch, fitTruncated, fitUndefinedLocalType, fitDefinitionInvalid
        case fitCompressedWithoutTimestamp, fitValueInvalid
        // PROTOBUF payloads (§7)
        case protobufInvalid
        // an alarm table the watch's settings file cannot carry, or a settings file without alarms (§10)
        case alarmNotSettable, settingsFileInvalid
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var category: ErrorCategory {
        switch code {
        case .frameTooLong, .stringTooLong, .fitValueInvalid, .alarmNotSettable: .invalidInput
        default: .protocolError
        }
    }

    public var description: String { message }
}

func hexString(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { let digits = String($0, radix: 16); return digits.count == 1 ? "0" + digits : digits }.joined()
}
