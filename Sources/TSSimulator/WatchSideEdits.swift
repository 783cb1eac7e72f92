import TSModels
import TSProtocol

/// One alarm edit made on the simulated watch itself: the table as announced, and whether a
/// central acknowledged the announcement (then the central had received it).
public struct WatchSideEdit: Sendable, Hashable, Encodable {
    public var origin: AlarmChangeOrigin
    public var alarms: [Alarm]
    public var acknowledged = false
    /// The connection and sequence number the announcement went out with; nil: no central was connected.
    var announcement: Announcement?

    struct Announcement: Hashable {
        var generation: Int
        var sequence: UInt8
    }

    enum CodingKeys: String, CodingKey {
        case origin, alarms, acknowledged
    }
}

extension SimulatedWatch {
    /// Logs an edit about to be announced; `sendOwn` numbers the announcement with the link's next sequence.
    func noteWatchSideEdit(origin: AlarmChangeOrigin, alarms: [Alarm]) {
        let announcement = link.map { WatchSideEdit.Announcement(generation: $0.generation, sequence: $0.sequence) }
        watchSideEdits.append(WatchSideEdit(origin: origin, alarms: alarms, announcement: announcement))
    }

    /// A central acknowledged an ALARMS_CHANGED on the current link (the first time or again).
    func noteAlarmsChangedAcknowledged(sequence: UInt8) {
        guard let generation = link?.generation,
              let index = watchSideEdits.lastIndex(where: { $0.announcement == WatchSideEdit.Announcement(generation: generation, sequence: sequence) })
        else { return }
        watchSideEdits[index].acknowledged = true
    }
}
