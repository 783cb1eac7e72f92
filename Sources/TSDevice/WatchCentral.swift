import Foundation
import TSGATT
import TSModels

/// The central side of one watch in one dialect: what the watch service, the sync and the
/// daemon's supervisor need of a watch, in TSModels types. Protocol v1 (`Watch`) and the
/// standard services (`StandardServicesWatch`) are two; a dialect's family registers its own in
/// `WatchFamilies.builtIn` (TSFamilies).
///
/// Only `connect`, `disconnect`, the state and `events` are required. Every feature has a
/// default that answers "not supported" at once (`WatchError.unsupported`), so a dialect
/// implements what its watches can do and says so in `capabilities`.
public protocol WatchCentral: AnyObject, Sendable {
    /// The dialect this central speaks.
    nonisolated var dialect: Dialect { get }
    nonisolated var configuration: WatchConfiguration { get }
    var isConnected: Bool { get async }
    /// What the watch said about itself on the current or last connection.
    var info: DeviceInfo? { get async }
    /// What the watch can do, from the current or last connection (`.nothing` before the first).
    var capabilities: WatchCapabilities { get async }
    /// The ATT MTU of the current link, when the dialect runs over one.
    var linkMTU: Int? { get async }
    /// How long the last connect took to open the link and to hear the watch.
    var connectTimings: ConnectTimings { get async }

    /// Opens the link, learns what the watch is and, when the configuration says so, sets its
    /// clock. Does nothing when already connected.
    @discardableResult
    func connect() async throws -> DeviceInfo
    func disconnect() async
    /// Everything the watch reports on its own, for as long as the stream is iterated; any
    /// number of subscribers at once. A subscription made before `connect` sees that link's events.
    func events() -> AsyncStream<WatchEvent>

    func syncTime() async throws
    func battery() async throws -> BatteryStatus
    /// Battery levels (percent) as the watch notifies them, until the link ends.
    func batteryLevelChanges() async throws -> AsyncStream<UInt8>
    /// Heart-rate measurements as they are taken, until the link ends; a malformed value is
    /// reported to `malformed`, never delivered.
    func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement>
    func alarms() async throws -> [Alarm]
    /// Replaces the whole alarm table, checked against the watch's limits before anything is sent.
    func setAlarms(_ alarms: [Alarm]) async throws
    /// Makes the watch ring now for the alarm in `slot`.
    func ring(slot: Int, purpose: RingPurpose) async throws -> RingOutcome
    func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig
    func setMonitorConfig(_ config: MonitorConfig) async throws
    func setLiveSleepEvents(_ enabled: Bool) async throws
    /// Starts handing over the sleep records with start in [start, end) (end nil: up to now).
    func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer
    /// The heart rate the watch measured on its own with time in [start, end) (end nil: up to
    /// now), in parts (a day each) in order of time, each sample at the time the watch measured it
    /// (`capabilities.heartRateHistory`).
    func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error>
    /// Tells the watch that `count` records with start in [start, end) are durably stored
    /// (`capabilities.sleepSync.acknowledges`); returns how many it deleted.
    func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int
}

/// How long a connect took, until the link was open and until the watch's first byte arrived.
public struct ConnectTimings: Sendable, Hashable {
    public var linkOpen: Duration?
    public var firstByte: Duration?

    public init(linkOpen: Duration? = nil, firstByte: Duration? = nil) {
        self.linkOpen = linkOpen
        self.firstByte = firstByte
    }
}

/// The records of one sleep transfer, in parts (a page, a day), each exactly once and in order.
public struct SleepRecordTransfer: Sendable {
    /// The records the watch announced for the whole transfer; nil when it announces no total
    /// (the dialect then fails `parts` itself when a transfer ends short).
    public var total: Int?
    public var parts: AsyncThrowingStream<[SleepItem], any Error>

    public init(total: Int?, parts: AsyncThrowingStream<[SleepItem], any Error>) {
        self.total = total
        self.parts = parts
    }
}

extension WatchCentral {
    /// "Not supported" for a feature this dialect lacks, at once.
    public func unsupported(_ feature: String) -> WatchError {
        .unsupported("\(feature) (a watch speaking the \(dialect) dialect has none)")
    }

    public var linkMTU: Int? { get async { nil } }
    public var connectTimings: ConnectTimings { get async { ConnectTimings() } }

    public func syncTime() async throws { throw unsupported("setting its clock") }
    public func battery() async throws -> BatteryStatus { throw unsupported("a battery reading") }
    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> { throw unsupported("battery notifications") }
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement> {
        throw unsupported("heart rate")
    }
    public func alarms() async throws -> [Alarm] { throw unsupported("alarms") }
    public func setAlarms(_ alarms: [Alarm]) async throws { throw unsupported("alarms") }
    public func ring(slot: Int, purpose: RingPurpose) async throws -> RingOutcome { throw unsupported("ringing an alarm") }
    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig { throw unsupported("monitor settings") }
    public func setMonitorConfig(_ config: MonitorConfig) async throws { throw unsupported("monitor settings") }
    public func setLiveSleepEvents(_ enabled: Bool) async throws { throw unsupported("live sleep stages") }
    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer { throw unsupported("sleep records") }
    public func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int { throw unsupported("acknowledging synced sleep records") }
    public func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        throw unsupported("a heart-rate history")
    }

    /// All records of [start, end) in one array (for small ranges and tests).
    public func allSleepRecords(start: Int64, end: Int64?) async throws -> [SleepItem] {
        var records: [SleepItem] = []
        for try await part in try await sleepTransfer(start: start, end: end).parts { records += part }
        return records
    }

    /// The reason each time an open link ends.
    public func linkLosses() -> AsyncStream<String> { events().keeping { if case let .linkLost(reason) = $0 { reason } else { nil } } }
    /// Alarm tables changed on the watch's side.
    public func watchSideAlarmChanges() -> AsyncStream<AlarmTableChange> { events().keeping { if case let .alarmsChanged(change) = $0 { change } else { nil } } }
    /// Live sleep stages.
    public func liveSleepStages() -> AsyncStream<LiveStage> { events().keeping { if case let .liveStage(stage) = $0 { stage } else { nil } } }
    /// Alarms ringing and ending.
    public func alarmAlertNotices() -> AsyncStream<AlarmAlertNotice> { events().keeping { if case let .alarmAlert(notice) = $0 { notice } else { nil } } }
}

extension AsyncStream where Element: Sendable {
    /// The elements `transform` keeps, as a stream that ends with this one or when it is dropped.
    func keeping<Kept: Sendable>(_ transform: @escaping @Sendable (Element) -> Kept?) -> AsyncStream<Kept> {
        AsyncStream<Kept> { continuation in
            let task = Task {
                for await element in self { if let kept = transform(element) { continuation.yield(kept) } }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
