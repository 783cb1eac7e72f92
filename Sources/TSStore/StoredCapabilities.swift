import Foundation
import TSModels

/// A watch's capabilities as the `watch` table keeps them: `WatchCapabilities` as JSON. Rows
/// written before it was the one capability type hold protocol v1's DEVICE_INFO terms
/// (`maxAlarms`, `supportsLiveSleep`, …); they read as the same watch, so an upgrade keeps what
/// `info` and the alarm limits knew of it.
enum StoredCapabilities {
    static func decode(_ json: String) throws -> WatchCapabilities {
        let data = Data(json.utf8)
        guard let legacy = try? JSONDecoder().decode(DeviceInfoTerms.self, from: data) else {
            return try JSONDecoder().decode(WatchCapabilities.self, from: data)
        }
        return legacy.capabilities
    }

    /// The earlier shape; `maxAlarms` is what tells it from the present one.
    struct DeviceInfoTerms: Decodable {
        var maxAlarms: Int
        var labelMaxBytes: Int
        var remarkMaxBytes: Int
        var statisticsRule: StatisticsRule
        var supportsNaps: Bool
        var deletesSyncedRecords: Bool
        var supportsLiveSleep: Bool
        var monitorTypes: [MonitorType]
        var maxSmartWindow: Int?
        var supportsRing: Bool?
        var reportsAlarmAlerts: Bool?

        /// A row with neither alarms nor monitors was a watch of the standard services only
        /// (the earlier `none`): it synced no sleep. Any other was protocol v1's.
        var capabilities: WatchCapabilities {
            let spokeProtocolV1 = maxAlarms > 0 || !monitorTypes.isEmpty || supportsLiveSleep
            guard spokeProtocolV1 else { return .nothing }
            let alarms = maxAlarms > 0
                ? WatchCapabilities.Alarms(maxCount: maxAlarms, labelMaxBytes: labelMaxBytes, remarkMaxBytes: remarkMaxBytes, snooze: true,
                                           maxSmartWindow: maxSmartWindow ?? 0)
                : nil
            return WatchCapabilities(alarms: alarms, monitorTypes: monitorTypes,
                                     sleepSync: .init(selection: .range, paged: true, deletesSynced: deletesSyncedRecords, acknowledges: true),
                                     statisticsRule: statisticsRule, naps: supportsNaps, liveStages: supportsLiveSleep,
                                     ring: supportsRing ?? false, alarmAlerts: reportsAlarmAlerts ?? false, battery: true, clock: true)
        }
    }
}
