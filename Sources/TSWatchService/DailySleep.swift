import Foundation
import TSModels
import TSSleep
import TSStore

/// Daily sleep reports, the shape of `sleep show --json` and of the daemon's DailySleep.
public struct DailySleepReport: Sendable, Codable {
    public var watch: WatchID
    public var timeZone: String
    public var rule: Int
    public var days: [DailySleepModel]

    public init(watch: WatchID, timeZone: String, rule: Int, days: [DailySleepModel]) {
        self.watch = watch
        self.timeZone = timeZone
        self.rule = rule
        self.days = days
    }

    public var statisticsRule: StatisticsRule { StatisticsRule(rawValue: UInt8(clamping: rule)) ?? .withNap }
}

extension GatewayStore {
    /// The report of the local dates [first, last] under `policy`: the rule asked for, else the
    /// configured one, else the watch's own as last stored.
    public func dailySleepReport(watch: WatchID, first: LocalDate, last: LocalDate, policy: WatchPolicy, rule asked: StatisticsRule?) async throws -> DailySleepReport {
        let capabilities = try await watches().first { $0.id == watch }?.info?.capabilities
        return try await dailySleepReport(watch: watch, first: first, last: last, timeZone: policy.timeZone,
                                          rule: policy.rule(asked: asked, watch: capabilities))
    }

    /// Daily sleep models of the local dates [first, last] from the stored records of a watch:
    /// the records from two days before the first date (a night may start at 20:00 the day
    /// before) up to the day after the last, processed under `rule` in `timeZone`. Each segment
    /// carries the heart rate of the samples stored during it (none: no `heartRate`).
    public func dailySleepReport(watch: WatchID, first: LocalDate, last: LocalDate, timeZone: TimeZone, rule: StatisticsRule) async throws -> DailySleepReport {
        let clock = LocalDayClock(timeZone: timeZone)
        let records = try await sleepRecords(watch: watch, start: clock.startOfDate(clock.adding(days: -2, to: first)),
                                             end: clock.startOfDate(clock.adding(days: 1, to: last)))
        var days = SleepProcessor.process(records, rule: rule, timeZone: timeZone).filter { $0.date >= first && $0.date <= last }
        let heartRate = try await heartRateSummaries(watch: watch, spans: days.flatMap(\.segmentSpans))
        for index in days.indices { days[index].setHeartRate { heartRate[$0] } }
        return DailySleepReport(watch: watch, timeZone: timeZone.identifier, rule: Int(rule.rawValue), days: days)
    }
}
