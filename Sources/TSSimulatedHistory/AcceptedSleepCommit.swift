import TSModels

/// A SLEEP_COMMIT the simulated watch accepted (its count matched): the central said it holds
/// these records durably, so a watch that deletes synced data would delete them now. The
/// power-cut test (scripts/e2e-powercut) logs each one where a cut cannot reach it and then
/// looks for every record in the database.
public struct AcceptedSleepCommit: Sendable, Hashable, Codable {
    /// The committed range of record start times, [start, end).
    public var start: Int64
    public var end: Int64
    /// The watch's records in that range.
    public var records: [SleepItem]

    public init(start: Int64, end: Int64, records: [SleepItem]) {
        self.start = start
        self.end = end
        self.records = records
    }
}
