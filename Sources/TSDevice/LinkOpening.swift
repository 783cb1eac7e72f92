import TSModels
import TSTransport

/// The steps every dialect's `connect` begins with: open the link (a failure is
/// `WatchError.connectFailed` with the transport's category), time it, and hand the link's
/// events to the central until the link closes. What the central says first differs by dialect.
enum LinkOpening {
    struct Opened {
        var connection: any TransportConnection
        /// From the call until the link was open.
        var linkOpen: Duration
    }

    static func open(_ transport: any WatchTransport, started: ContinuousClock.Instant = .now) async throws -> Opened {
        do {
            let connection = try await transport.open()
            return Opened(connection: connection, linkOpen: .now - started)
        } catch {
            throw WatchError.connectFailed(String(describing: error), ErrorCategory.of(error))
        }
    }

    /// Hands each event of `connection` to `handle`, then calls `ended` once the stream ends
    /// (the central ignores both once a newer link has replaced this one).
    @discardableResult
    static func pumpEvents(of connection: any TransportConnection, to handle: @escaping @Sendable (TransportEvent) async -> Void,
                           ended: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task {
            for await event in connection.events { await handle(event) }
            await ended()
        }
    }
}
