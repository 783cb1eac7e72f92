import Foundation
import TSModels

/// One day of a sleep reply (big-data type 0x27) as the project's sleep items.
public struct RingSleepDay: Sendable, Hashable {
    /// Days before the ring's today.
    public var daysAgo: Int
    /// The day the sleep ended on, on the ring's clock.
    public var date: RingDate
    /// Unix time the sleep began: the start minute on the ring's clock read in the zone.
    public var start: Int64
    /// `start` plus the minutes from the start minute to the end minute.
    public var end: Int64
    /// Light, deep, REM and awake stretches, laid end to end from `start`.
    public var items: [SleepItem]
    /// Pairs with stage 0 (no data) or 1 (error): their minutes pass, no item is made.
    public var droppedPairs: Int
}

/// Reads the payload of a sleep reply (protocol-spec/qring/qring.md §6).
public enum RingSleep {
    /// Stages may run this many minutes past the start-to-end span: a ring whose clock the
    /// gateway set back an hour during the night (the end of DST) reports an end an hour early.
    public static let overrunToleranceMinutes = 60

    /// `today` is the ring's date when it answered; `zone` is the zone its clock was set in.
    public static func days(payload: [UInt8], today: RingDate, zone: TimeZone) throws(QRingError) -> [RingSleepDay] {
        guard let count = payload.first else { return [] }
        var at = 1
        var days: [RingSleepDay] = []
        for number in stride(from: 1, through: Int(count), by: 1) {
            guard payload.count - at >= 2 else {
                throw QRingError(.sleepTruncated, "sleep day \(number) of \(count): the reply ends before its header")
            }
            let daysAgo = Int(payload[at]), dayBytes = Int(payload[at + 1])
            at += 2
            guard dayBytes >= 4, (dayBytes - 4) % 2 == 0 else {
                throw QRingError(.sleepDayLength, "sleep day \(number): length \(dayBytes) is not 4 bytes of start and end plus whole (stage, minutes) pairs")
            }
            guard payload.count - at >= dayBytes else {
                throw QRingError(.sleepDayOverrun, "sleep day \(number) claims \(dayBytes) bytes, \(payload.count - at) are left in the reply")
            }
            let body = Array(payload[at..<at + dayBytes])
            at += dayBytes
            days.append(try day(number: number, daysAgo: daysAgo, body: body, today: today, zone: zone))
        }
        guard at == payload.count else {
            throw QRingError(.sleepTrailingBytes, "\(payload.count - at) bytes follow the last of the \(count) sleep days")
        }
        return days
    }

    private static func day(number: Int, daysAgo: Int, body: [UInt8], today: RingDate, zone: TimeZone) throws(QRingError) -> RingSleepDay {
        let startMinute = u16(body, 0), endMinute = u16(body, 2)
        for (what, minute) in [("start", startMinute), ("end", endMinute)] where minute >= 1440 {
            throw QRingError(.sleepMinuteOutOfRange, "sleep day \(number): \(what) minute \(minute) is not below 1440")
        }
        let date = today.adding(days: -daysAgo)
        let startDate = startMinute > endMinute ? date.adding(days: -1) : date
        let span = startMinute <= endMinute ? endMinute - startMinute : endMinute + 1440 - startMinute
        let first = RingClock.instant(ofWall: startDate.wallSeconds + Int64(startMinute * 60), in: zone)
        var time = first, items: [SleepItem] = [], dropped = 0, total = 0
        for pair in stride(from: 4, to: body.count, by: 2) {
            let code = body[pair], minutes = Int(body[pair + 1])
            let stage: SleepStage?
            switch code {
            case 0, 1: stage = nil
            case 2: stage = .light
            case 3: stage = .deep
            case 4: stage = .rem
            case 5: stage = .awake
            default: throw QRingError(.sleepStageOutOfRange, "sleep day \(number): stage \(code) is not one of 0…5")
            }
            total += minutes
            if minutes > 0, let stage {
                items.append(SleepItem(stage: stage, start: time, duration: Int64(minutes * 60)))
            } else if minutes > 0 {
                dropped += 1
            }
            time += Int64(minutes * 60)
        }
        guard total <= span + overrunToleranceMinutes else {
            throw QRingError(.sleepStagesOverrun, "sleep day \(number): its stages last \(total) min, but start to end is \(span) min")
        }
        return RingSleepDay(daysAgo: daysAgo, date: date, start: first, end: first + Int64(span * 60), items: items, droppedPairs: dropped)
    }
}
