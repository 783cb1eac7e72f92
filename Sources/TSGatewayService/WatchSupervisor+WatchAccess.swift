import Foundation
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
    public func heartRateSamples() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        let (stream, continuation) = AsyncThrowingStream<HeartRateSample, any Error>.makeStream()
        let reader = UUID()
        heartRateReaders[reader] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.stopReading(reader) } }
        return stream
    }

    /// The alarm tables changed on the wrist, each already kept in the alarm history.
    public func watchSideAlarmChanges() async throws -> AsyncThrowingStream<AlarmTableChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream<AlarmTableChange, any Error>.makeStream()
        let reader = UUID()
        alarmChangeReaders[reader] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.stopReading(reader) } }
        return stream
    }

    private func stopReading(_ reader: UUID) {
        heartRateReaders[reader] = nil
        alarmChangeReaders[reader] = nil
    }

    /// Ends every front door's stream (the daemon stops).
    func endReaders() {
        for reader in heartRateReaders.values { reader.finish() }
        for reader in alarmChangeReaders.values { reader.finish() }
        heartRateReaders.removeAll()
        alarmChangeReaders.removeAll()
    }
}
