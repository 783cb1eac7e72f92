import Foundation
import TSDevice
import TSModels
import TSSleep

/// What a watch offers the front doors, whoever holds its link: this process
/// (`WatchOperations`, over its own link and store) or `tsgateway serve` (`RemoteWatch`, its
/// D-Bus client, behind which the daemon's `WatchOperations` run). A command of the CLI is
/// written once against this; the daemon's D-Bus service and MQTT bridge serve the same
/// operations, so each result has one type whichever door it leaves by.
public protocol WatchAccess: Sendable {
    var watchId: WatchID { get }
    /// What the watch said about itself (connecting when needed; the daemon's copy when it has one).
    func info() async throws -> DeviceInfo
    /// What the watch can do, as its dialect says (through the daemon: its `Capabilities`); nil
    /// when that is not known yet.
    func capabilities() async throws -> WatchCapabilities?
    func battery() async throws -> BatteryStatus
    func lastSync() async throws -> Date?
    func syncTime() async throws
    func alarms() async throws -> [Alarm]
    func setAlarms(_ alarms: [Alarm]) async throws
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig
    func setMonitorConfig(_ config: MonitorConfig) async throws
    func syncSleep(_ request: SyncRequest, progress: (@Sendable (SleepSyncProgress) -> Void)?) async throws -> SleepSyncReport
    /// Daily reports of the local dates [first, last] from the stored records; nil zone and rule:
    /// the policy's (or the watch's own rule).
    func dailySleep(first: LocalDate, last: LocalDate, timeZone: TimeZone?, rule: StatisticsRule?) async throws -> DailySleepReport
    /// Heart Rate Measurements while the link lasts.
    func heartRateSamples() async throws -> AsyncThrowingStream<HeartRateSample, any Error>
    /// Alarm tables changed on the watch itself (not by the gateway), until the link (or the daemon) goes away.
    func watchSideAlarmChanges() async throws -> AsyncThrowingStream<AlarmTableChange, any Error>
}

/// What a simulated watch does by itself while a command of this process watches it: its
/// wearer's heart beats while someone listens, its wearer edits an alarm on the wrist now and
/// then. A real watch does both on its own; the simulators live above the watch service, so the
/// front door that opened one hands this in (`WatchOperations.simulatedActivity`).
public protocol SimulatedActivity: Sendable {
    /// Beats of the wearer's heart until the task is cancelled.
    func heartbeats() -> Task<Void, Never>
    /// Edits on the wrist until the task is cancelled.
    func wristEdits() -> Task<Void, Never>
}

extension WatchOperations: WatchAccess {
    public func info() async throws -> DeviceInfo { try await connect() }

    public func capabilities() async throws -> WatchCapabilities? { await watch.capabilities }

    /// Each change is kept in the alarm history before it is passed on; a lost link ends the
    /// stream with its reason instead of waiting forever.
    public func watchSideAlarmChanges() async throws -> AsyncThrowingStream<AlarmTableChange, any Error> {
        let changes = watch.watchSideAlarmChanges()
        let losses = watch.linkLosses()
        let editor = simulatedActivity?.wristEdits()
        return AsyncThrowingStream { continuation in
            let forward = Task {
                for await change in changes {
                    do {
                        try await recordWatchSideChange(change)
                    } catch {
                        continuation.finish(throwing: error)
                        return
                    }
                    continuation.yield(change)
                }
                continuation.finish()
            }
            let ending = Task {
                for await reason in losses { continuation.finish(throwing: WatchError.disconnected(reason)); return }
            }
            continuation.onTermination = { _ in forward.cancel(); ending.cancel(); editor?.cancel() }
        }
    }
}
