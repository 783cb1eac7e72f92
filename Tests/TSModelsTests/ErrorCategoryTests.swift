import TSModels
import Testing

@Suite("error categories")
struct ErrorCategoryTests {
    @Test("each category has its own exit status and D-Bus name, but for the two that mean 'failed'")
    func distinct() {
        let statuses = ErrorCategory.allCases.filter { $0 != .cancelled }.map(\.exitStatus)
        #expect(Set(statuses).count == statuses.count)
        #expect(Set(ErrorCategory.allCases.map(\.rawValue)).count == ErrorCategory.allCases.count)
        #expect(ErrorCategory.cancelled.exitStatus == ErrorCategory.failed.exitStatus)
    }

    @Test("the D-Bus names of version 1 stay")
    func namesKept() {
        #expect(ErrorCategory(rawValue: "NotConnected") == .unavailable)
        #expect(ErrorCategory(rawValue: "InvalidArguments") == .invalidInput)
        #expect(ErrorCategory(rawValue: "Protocol") == .protocolError)
        #expect(ErrorCategory(rawValue: "Storage") == .storage)
    }

    @Test("an error's category: its own, cancelled for a cancellation, failed otherwise")
    func ofAnyError() {
        struct Plain: Error {}
        #expect(ErrorCategory.of(CategorizedFailure(.notPaired, "pair it")) == .notPaired)
        #expect(ErrorCategory.of(CancellationError()) == .cancelled)
        #expect(ErrorCategory.of(Plain()) == .failed)
    }
}
