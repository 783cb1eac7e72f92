import TSModels

/// The stages of the simulated watch's most recent night, replayed fast so that a heart rate
/// following them moves through a whole night in minutes: each beat steps `secondsPerBeat` of
/// the night, and after its last stage the night starts again.
public struct NightReplay: Sendable, Hashable {
    /// The night's items in order; empty when the records hold no night.
    public let items: [SleepItem]
    public let secondsPerBeat: Int64

    /// A gap this long or longer ends a sleep session.
    static let sessionGap: Int64 = 3_600
    /// A session this long or longer is a night, not a nap.
    static let shortestNight: Int64 = 3 * 3_600

    public init(records: [SleepItem], secondsPerBeat: Int64 = 60) {
        self.secondsPerBeat = max(1, secondsPerBeat)
        items = Self.lastNight(in: records)
    }

    /// The stage `beat` beats into the replay; awake when there is no night to replay.
    public func stage(atBeat beat: Int) -> SleepStage {
        guard let first = items.first, let last = items.last, last.end > first.start else { return .awake }
        let length = last.end - first.start
        let offset = (Int64(max(0, beat)) * secondsPerBeat) % length
        let time = first.start + offset
        return items.last { $0.start <= time }?.stage ?? .awake
    }

    /// The last run of items without an hour's gap that lasts three hours or more (a nap is
    /// shorter); all of the records' last run when none does.
    static func lastNight(in records: [SleepItem]) -> [SleepItem] {
        let sorted = records.sorted { ($0.start, $0.stage) < ($1.start, $1.stage) }
        var sessions: [[SleepItem]] = []
        for item in sorted {
            if let previous = sessions.last?.last, item.start - previous.end < sessionGap {
                sessions[sessions.count - 1].append(item)
            } else {
                sessions.append([item])
            }
        }
        let nights = sessions.filter { session in
            guard let first = session.first, let last = session.last else { return false }
            return last.end - first.start >= shortestNight
        }
        return nights.last ?? sessions.last ?? []
    }
}
