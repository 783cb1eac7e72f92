import TSModels

/// A rule of the NPK dialect broken, by bytes from the watch or by a value about to be sent:
/// which rule (`code`, stable, the name the vectors in protocol-spec/npk/vectors use), what kind
/// of failure it is for the front ends, and a sentence for people.
public struct NpkError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // One frame (topstep-npk.md section 3).
        case badMagic, truncatedHeader, lengthOverBound, lengthMismatch, crcMismatch
        // A frame's command and payload (sections 3, 5).
        case unknownCommand, unexpectedPayload, payloadDoesNotParse
        case notAListFrame, unexpectedListFrame, truncatedListHeader, listIndexOutOfRange
        // The frames of one list (section 3).
        case listIndexOutOfOrder, listSequenceChanged, listTotalChanged, listCommandChanged, listIncomplete
        // Values from the watch the gateway's models cannot hold (section 7).
        case negativeDuration, zeroDuration, unknownSleepStage
        case alarmIdOutOfRange, hourOutOfRange, minuteOutOfRange, repeatOutOfRange, labelTooLong
        case batteryLevelOutOfRange, valueOutOfRange, timeOutOfRange
        // Values the gateway was asked to send.
        case tooManyAlarms, duplicateAlarmId, notSupported, payloadTooLarge
        // Request matching (section 4).
        case requestInFlight
    }

    public var code: Code
    public var message: String
    public var category: ErrorCategory

    public init(_ code: Code, _ message: String, category: ErrorCategory? = nil) {
        self.code = code
        self.message = message
        self.category = category ?? Self.defaultCategory(code)
    }

    public var description: String { message }

    private static func defaultCategory(_ code: Code) -> ErrorCategory {
        switch code {
        case .tooManyAlarms, .duplicateAlarmId, .payloadTooLarge: .invalidInput
        case .notSupported: .notSupported
        case .requestInFlight: .failed
        default: .protocolError
        }
    }
}
