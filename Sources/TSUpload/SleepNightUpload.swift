import Foundation
import TSModels
import TSSleep
import TSStore

/// The outbox events for synced sleep nights, and their JSON body (the `/api/v1/sleep` shape):
/// what `SleepSync` enqueues (`SleepSync.outbox`) and `tsgateway serve`'s `UploadOutbox` POSTs.
public enum SleepNightUpload {
    public static let kind = "sleepNight"
    /// How far before a range the records are read so that every night touching it is whole.
    public static let lookback: Int64 = 2 * 86_400

    /// `<watchId>:<night start, Unix seconds>`: the same night gets the same id on every gateway and after restarts.
    public static func sourceId(watchId: WatchID, night: SleepSegment) -> String {
        "\(watchId.rawValue):\(night.summary.start)"
    }

    /// The final nights of `records` with their belonging dates. `records` must hold every
    /// stored record of the watch from a day boundary on; `completeFrom..<rangeEnd` is the range
    /// the store holds completely.
    public static func finalNights(
        records: [SleepItem], rule: StatisticsRule, timeZone: TimeZone,
        completeFrom: Int64, rangeEnd: Int64, settle: Duration = .seconds(3600)
    ) -> [(date: LocalDate, night: SleepSegment)] {
        let settleSeconds = max(SleepOperations.splittingAwakeSeconds, Int64(settle.components.seconds))
        let clock = LocalDayClock(timeZone: timeZone)
        var nights: [(date: LocalDate, night: SleepSegment)] = []
        for day in SleepProcessor.process(records, rule: rule, timeZone: timeZone) {
            let windows = clock.windows(for: day.date)
            switch rule {
            case .longestNight:
                // The longest segment of the night window: final once no item of that window can still come.
                let nightPart = SleepOperations.separateNightAndDaytime(day.rawItems, nightStart: windows.eveningBefore, nightEnd: windows.eight).night
                let lastEnd = max(windows.eight, nightPart.last?.end ?? windows.eight)
                guard rangeEnd >= lastEnd + settleSeconds else { continue }
            case .longestOnly:
                guard rangeEnd >= windows.evening else { continue }
            case .withoutNap, .withNap:
                break
            }
            for night in day.nightSleeps
            where night.summary.start - SleepOperations.splittingAwakeSeconds >= completeFrom && night.summary.end + settleSeconds <= rangeEnd {
                nights.append((day.date, night))
            }
        }
        return nights
    }

    /// The outbox events of `nights` (each with the heart rate it should carry, if any).
    public static func events(nights: [(date: LocalDate, night: SleepSegment)], watchId: WatchID) -> [OutboxEventDraft] {
        nights.compactMap { date, night in
            guard let payload = try? payload(night: night, date: date, watchId: watchId) else { return nil }
            return OutboxEventDraft(sourceId: sourceId(watchId: watchId, night: night), watchId: watchId, kind: kind, payload: payload)
        }
    }

    /// The request body of one night. Times are RFC 3339 in UTC, `date` is the night's
    /// belonging date in the analysis zone, minutes are rounded to the nearest minute,
    /// `sleep_efficiency` is `SleepEfficiency.percent` (whole percent), `heart_rate`
    /// the night's `heartRate` (left out when it has none).
    public static func payload(night: SleepSegment, date: LocalDate, watchId: WatchID) throws -> String {
        let inBed = night.summary.end - night.summary.start
        let body = Body(
            start_time: rfc3339(night.summary.start),
            end_time: rfc3339(night.summary.end),
            date: date.description,
            time_in_bed_minutes: minutes(inBed),
            total_sleep_minutes: minutes(night.summary.totalSleepDuration),
            sleep_efficiency: Double(SleepEfficiency.percent(asleep: night.summary.totalSleepDuration, inBed: inBed)),
            source: "tsgateway",
            source_id: sourceId(watchId: watchId, night: night),
            device_id: watchId,
            stages: night.detailItems.map { item in
                Stage(stage: HealthKitSleepValue(stage: item.stage).rawValue, start_time: rfc3339(item.start),
                      end_time: rfc3339(item.end), duration_minutes: minutes(item.end - item.start))
            },
            heart_rate: night.heartRate.map { HeartRate(min_bpm: $0.minimum, avg_bpm: $0.average, max_bpm: $0.maximum, sample_count: $0.samples) })
        return String(decoding: try JSONCoding.encoder().encode(body), as: UTF8.self)
    }

    // The wire names are the API's.
    struct Body: Encodable {
        var start_time: String
        var end_time: String
        var date: String
        var time_in_bed_minutes: Int64
        var total_sleep_minutes: Int64
        var sleep_efficiency: Double
        var source: String
        var source_id: String
        var device_id: WatchID
        var stages: [Stage]
        var heart_rate: HeartRate?
    }

    struct HeartRate: Encodable {
        var min_bpm: Int
        var avg_bpm: Double
        var max_bpm: Int
        var sample_count: Int
    }

    struct Stage: Encodable {
        var stage: String
        var start_time: String
        var end_time: String
        var duration_minutes: Int64
    }

    static func minutes(_ seconds: Int64) -> Int64 {
        (seconds + 30).quotientAndRemainder(dividingBy: 60).quotient
    }

    static func rfc3339(_ seconds: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        func pad(_ value: Int?, _ width: Int = 2) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month))-\(pad(parts.day))T\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second))Z"
    }
}
