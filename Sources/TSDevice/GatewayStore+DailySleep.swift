import Foundation
import TSModels
import TSSleep
import TSStore

extension GatewayStore {
    /// Daily sleep models of the local dates [first, last] from the stored records of a watch:
    /// the records from two days before the first date (a night may start at 20:00 the day
    /// before) up to the day after the last, processed under `rule` in `timeZone`.
    public func dailySleep(watch: String, first: LocalDate, last: LocalDate, rule: StatisticsRule, timeZone: TimeZone) async throws -> [DailySleepModel] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let firstDay = calendar.date(from: DateComponents(year: first.year, month: first.month, day: first.day)),
              let lastDay = calendar.date(from: DateComponents(year: last.year, month: last.month, day: last.day)) else { return [] }
        let from = Int64((calendar.date(byAdding: .day, value: -2, to: firstDay) ?? firstDay).timeIntervalSince1970)
        let to = Int64((calendar.date(byAdding: .day, value: 1, to: lastDay) ?? lastDay).timeIntervalSince1970)
        let records = try await sleepRecords(watch: watch, start: from, end: to)
        return SleepProcessor.process(records, rule: rule, timeZone: timeZone).filter { $0.date >= first && $0.date <= last }
    }
}
