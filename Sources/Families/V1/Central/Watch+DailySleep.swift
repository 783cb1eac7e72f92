import Foundation
import TSDevice
import TSModels
import TSSleep

extension Watch {
    /// Daily sleep models for records with start in [start, end) (end nil: up to now), processed
    /// by the sleep engine under the watch's own statistics rule in `timeZone` — the SDK's
    /// syncDailyData, computed on the gateway.
    public func dailySleep(start: UInt32, end: UInt32?, timeZone: TimeZone) async throws -> [DailySleepModel] {
        let rule = StatisticsRule.resolved(configured: nil, watch: try currentInfo().capabilities.statisticsRule)
        let records = try await sleepRecords(start: start, end: end)
        return SleepProcessor.process(records, rule: rule, timeZone: timeZone)
    }
}
