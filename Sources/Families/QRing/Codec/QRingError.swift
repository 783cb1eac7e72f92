import TSModels

/// A defect in bytes from a ring, or a value a ring cannot take: which rule was broken (`code`,
/// stable, named by the test vectors in protocol-spec/qring/vectors/) and a sentence for people.
public struct QRingError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // 16-byte packets
        case packetLength, checksumMismatch, ringReportedError, unexpectedCommand
        case invalidValue, valueOutOfRange, invalidBCD, outOfOrder, dayMismatch
        // values the gateway was asked to send
        case yearOutOfRange, intervalOutOfRange, windowNotSupported
        // sleep days (big-data type 0x27)
        case sleepTruncated, sleepDayLength, sleepDayOverrun, sleepTrailingBytes
        case sleepMinuteOutOfRange, sleepStageOutOfRange, sleepStagesOverrun
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var category: ErrorCategory {
        switch code {
        case .yearOutOfRange, .intervalOutOfRange, .windowNotSupported: .invalidInput
        default: .protocolError
        }
    }

    public var description: String { message }
}
