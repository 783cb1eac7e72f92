import Foundation
import TSDevice
import TSModels
import TSSleep
import TSWatchService

/// The daemon's watch as the front doors use it: the same operations as over an own link, each
/// answered by `tsgateway serve`'s D-Bus API.
extension RemoteWatch: WatchAccess {
    public var watchId: WatchID { id }

    /// The daemon's `Capabilities` of the watch, once it reached it; nil before.
    public func capabilities() async throws -> WatchCapabilities? {
        if let known = try await knownStatus()?.info { return known.capabilities }
        return try await status().info?.capabilities
    }

    /// From the daemon's status; only a watch it has not reached yet costs a connect.
    public func info() async throws -> DeviceInfo {
        if let info = try await knownStatus()?.info { return info }
        guard let info = try await status().info else {
            throw CategorizedFailure(.unavailable, "tsgateway serve has not reached \(id) yet; see `journalctl -u tsgateway`")
        }
        return info
    }

    public func battery() async throws -> BatteryStatus {
        let status = try await status()
        guard let level = status.batteryLevel, let state = status.batteryState else {
            throw CategorizedFailure(.unavailable, "tsgateway serve has no battery reading of \(id) yet")
        }
        return BatteryStatus(level: UInt8(clamping: level), state: state)
    }

    public func lastSync() async throws -> Date? { try await knownStatus()?.lastSync }

    /// The samples the daemon receives while it holds the link (its HeartRate signals). A watch
    /// the daemon knows to lack the Heart Rate service fails at once, as over an own link.
    public func heartRateSamples() async throws -> AsyncThrowingStream<HeartRateSample, any Error> {
        if let services = try await knownStatus()?.info?.offeredServices, !services.contains(.heartRate) {
            let offered = services.isEmpty ? "no service tsgateway knows" : services.sorted.map(\.title).joined(separator: ", ")
            throw CategorizedFailure(.notSupported, "\(id) cannot give heart rate (no Heart Rate service; it offers \(offered))")
        }
        return try await heartRateSignals()
    }

    /// The daemon also announces its own writes (origin `gateway`); these are the watch's.
    public func watchSideAlarmChanges() async throws -> AsyncThrowingStream<AlarmTableChange, any Error> {
        let changes = try await alarmChanges()
        return AsyncThrowingStream { continuation in
            let forward = Task {
                do {
                    for try await change in changes where change.origin != .gateway {
                        continuation.yield(AlarmTableChange(alarms: change.alarms, origin: change.origin))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in forward.cancel() }
        }
    }
}
