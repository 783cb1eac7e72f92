import Foundation
import TSFiles
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

    /// The edit as the ground truth holds it: one JSON object, keys sorted.
    func json() throws -> Data {
        try JSONCoding.recordEncoder().encode(self)
    }
}

/// Where a simulated watch that runs for hours (a soak's) puts its settled wrist edits, one JSON
/// object a line, so that the ground truth it keeps for the final check does not grow the
/// process it runs in (about 1 MiB an hour at a soak's rate, which the daemon's memory check
/// would count as the gateway's). Only the watch's actor uses it.
public final class WatchSideEditJournal: @unchecked Sendable {
    public let path: String
    private let file: PrivateFileAppender

    /// Creates (or empties) `path`, 0600.
    public init(path: String) throws {
        self.path = path
        file = try PrivateFile.appending(to: path)
    }

    deinit { file.close() }

    func append(_ edit: WatchSideEdit) throws {
        var line = try edit.json()
        line.append(0x0A)
        try file.append(line)
    }

    /// Every edit written so far, each as its JSON object, oldest first.
    public func writtenEdits() throws -> [Data] {
        try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: 0x0A).map { Data($0) }
    }
}

extension SimulatedWatch {
    /// Edits older than the newest this many go to the journal, when there is one: a central
    /// acknowledges an announcement within its link's round trip, long before this many more
    /// edits are made on the wrist.
    static let watchSideEditsHeld = 32

    /// From now on, settled wrist edits leave memory for `journal` (`allWatchSideEdits` reads them back).
    public func keepWatchSideEdits(in journal: WatchSideEditJournal) {
        watchSideEditJournal = journal
    }

    /// Every wrist edit, oldest first, as JSON objects: the journal's, then those still held.
    public func allWatchSideEdits() throws -> [Data] {
        try (watchSideEditJournal?.writtenEdits() ?? []) + watchSideEdits.map { try $0.json() }
    }

    /// Logs an edit about to be announced; `sendOwn` numbers the announcement with the link's next sequence.
    func noteWatchSideEdit(origin: AlarmChangeOrigin, alarms: [Alarm]) {
        let announcement = link.map { WatchSideEdit.Announcement(generation: $0.generation, sequence: $0.sequence) }
        watchSideEdits.append(WatchSideEdit(origin: origin, alarms: alarms, announcement: announcement))
        if let journal = watchSideEditJournal, watchSideEdits.count > Self.watchSideEditsHeld {
            // A journal that cannot be written leaves the edit in memory: nothing of the truth is lost.
            if (try? journal.append(watchSideEdits[0])) != nil { watchSideEdits.removeFirst() }
        }
    }

    /// A central acknowledged an ALARMS_CHANGED on the current link (the first time or again).
    func noteAlarmsChangedAcknowledged(sequence: UInt8) {
        guard let generation = link?.generation,
              let index = watchSideEdits.lastIndex(where: { $0.announcement == WatchSideEdit.Announcement(generation: generation, sequence: sequence) })
        else { return }
        watchSideEdits[index].acknowledged = true
    }
}
