import Foundation
import TSDevice
import TSModels
import TSWatchService

/// The daemon's door to a watch is the CLI's protocol: `WatchAccess` has two implementations
/// over a link, `WatchOperations` (a command of this process, its own link and store) and
/// `WatchSupervisor` (the link `serve` holds; the D-Bus service and the MQTT bridge dispatch
/// through it), and `RemoteWatch`, the CLI's client of the second. One name and one result type
/// per operation, whichever door it leaves by.
extension WatchSupervisor: WatchAccess {
    public nonisolated var watchId: WatchID { id }

    /// What the watch's dialect says it can do, once the watch was reached.
    public func capabilities() async throws -> WatchCapabilities? {
        try await ensureConnected()
        return await watch.capabilities
    }

    public func lastSync() async throws -> Date? { status.lastSync }

    /// The measurements the supervisor follows, as they come, for as long as the reader reads
    /// (across reconnects: the daemon keeps following the watch).
    public nonisolated func heartRateSamples() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        Self.throwing(heartRateReaders.subscribe())
    }

    /// The alarm tables changed on the wrist, each already kept in the alarm history.
    public nonisolated func watchSideAlarmChanges() async throws -> AsyncThrowingStream<AlarmTableChange, any Error> {
        Self.throwing(alarmChangeReaders.subscribe())
    }

    /// A fan-out's stream as the protocol's throwing one; it ends when the daemon stops.
    private static func throwing<Element: Sendable>(_ stream: AsyncStream<Element>) -> AsyncThrowingStream<Element, any Error> {
        AsyncThrowingStream { continuation in
            let forward = Task {
                for await element in stream { continuation.yield(element) }
                continuation.finish()
            }
            continuation.onTermination = { _ in forward.cancel() }
        }
    }
}
