import TSDevice
import TSModels
import TSProtocolV1Watch
import TSTransport
import Testing

/// A failed connect keeps the failure's own category (no adapter, unknown device, not paired),
/// so no layer above has to guess it from the words of the message.
@Suite("connect failures")
struct ConnectFailureTests {
    struct FailingTransport: WatchTransport {
        let error: any Error & Sendable
        func open() async throws -> any TransportConnection { throw error }
    }

    struct LinkFailure: CategorizedError, CustomStringConvertible {
        let category: ErrorCategory
        var description: String { "the link layer says no" }
    }

    @Test("the category of the transport's error survives into WatchError.connectFailed",
          arguments: [ErrorCategory.deviceNotFound, .notPaired, .permission, .timeout, .unavailable])
    func categorySurvives(category: ErrorCategory) async throws {
        let watch = Watch(transport: FailingTransport(error: LinkFailure(category: category)))
        let error = await #expect(throws: WatchError.self) { try await watch.connect() }
        #expect(error?.category == category)
        #expect(error.map(String.init(describing:))?.contains("the link layer says no") == true)
    }

    @Test("an error without a category is a connect that did not happen: unavailable")
    func uncategorizedIsUnavailable() async throws {
        struct Opaque: Error {}
        let watch = Watch(transport: FailingTransport(error: Opaque()))
        let error = await #expect(throws: WatchError.self) { try await watch.connect() }
        #expect(error?.category == .unavailable)
    }
}
