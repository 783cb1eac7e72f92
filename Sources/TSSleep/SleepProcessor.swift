import Foundation
import TSModels

/// The one entry point: raw items, a statistics rule and a named time zone in; one daily model
/// per belonging date that has at least one (cleaned) item out, in date order.
public enum SleepProcessor {
    public static func process(_ items: [SleepItem], rule: StatisticsRule, timeZone: TimeZone) -> [DailySleepModel] {
        analyse(items, rule: rule, timeZone: timeZone).days
    }

    /// Like `process`, also returning what input cleaning did.
    public static func analyse(_ items: [SleepItem], rule: StatisticsRule, timeZone: TimeZone) -> (days: [DailySleepModel], report: SleepInputReport) {
        let (cleaned, report) = SleepInputCleaner.clean(items)
        let clock = LocalDayClock(timeZone: timeZone)
        let strategy = rule.strategy
        var days: [DailySleepModel] = []
        var index = 0
        while index < cleaned.count {
            let date = clock.belongingDate(of: cleaned[index].start)
            let windows = clock.windows(for: date)
            var endIndex = index + 1
            while endIndex < cleaned.count && cleaned[endIndex].start < windows.evening { endIndex += 1 }
            let dayItems = Array(cleaned[index..<endIndex])
            days.append(dailyModel(dayItems, windows: windows, strategy: strategy))
            index = endIndex
        }
        return (days, report)
    }

    /// One belonging date's model from its cleaned items.
    public static func dailyModel(_ items: [SleepItem], windows: DayWindows, strategy: any SleepStatisticsStrategy) -> DailySleepModel {
        let outcome = strategy.analyse(items, windows: windows)
        let summary = SleepSummaryBuilder.dailySummary(of: outcome.counted, emptyAt: windows.eveningBefore)
        return DailySleepModel(
            date: windows.date,
            belongingDate: windows.startOfDate,
            statisticsRule: strategy.rule,
            dailySummary: summary,
            metrics: SleepSummaryBuilder.dailyMetrics(of: outcome.counted, summary: summary),
            rawItems: items,
            nightSleeps: outcome.nightSleeps,
            daytimeSleeps: outcome.daytimeSleeps,
            validNaps: outcome.validNaps)
    }
}
