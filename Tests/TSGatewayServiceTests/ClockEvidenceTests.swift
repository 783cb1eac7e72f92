import Foundation
import Synchronization
import TSDBus
import TSModels
import TSStore
import TSTestSupport
import TSWatchService
import Testing

/// `SystemClockEvidence`: what it reads and how, without the host's kernel or buses — timedated
/// is a stand-in on a private bus, the services' files are in a directory of the test's own.
@Suite("the system clock's evidence")
struct ClockEvidenceTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-clockevidence-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("the services' files: timesyncd's synchronized file, its runtime directory, chronyd's and ntpd's pid files, nothing")
    func runtimeFiles() throws {
        let run = try Self.directory()
        defer { try? FileManager.default.removeItem(at: run) }
        #expect(SystemClockEvidence.runtimeFiles(in: run.path) == TimeSyncState.none)
        try FileManager.default.createDirectory(at: run.appendingPathComponent("chrony"), withIntermediateDirectories: true)
        try Data("42\n".utf8).write(to: run.appendingPathComponent("chrony/chronyd.pid"))
        #expect(SystemClockEvidence.runtimeFiles(in: run.path) == .waiting(service: "chronyd"))
        try FileManager.default.createDirectory(at: run.appendingPathComponent("systemd/timesync"), withIntermediateDirectories: true)
        #expect(SystemClockEvidence.runtimeFiles(in: run.path) == .waiting(service: "systemd-timesyncd"))
        try Data().write(to: run.appendingPathComponent("systemd/timesync/synchronized"))
        #expect(SystemClockEvidence.runtimeFiles(in: run.path) == .synchronized(service: "systemd-timesyncd"))
    }

    @Test("TSGATEWAY_CLOCK: trusted, untrusted, unset or empty; anything else is refused with what to write")
    func assertion() throws {
        #expect(try SystemClockEvidence.assertion(["TSGATEWAY_CLOCK": "trusted"]) == .trusted)
        #expect(try SystemClockEvidence.assertion(["TSGATEWAY_CLOCK": " Untrusted"]) == .untrusted)
        #expect(try SystemClockEvidence.assertion([:]) == nil)
        #expect(try SystemClockEvidence.assertion(["TSGATEWAY_CLOCK": ""]) == nil)
        let error = #expect(throws: CategorizedFailure.self) { try SystemClockEvidence.assertion(["TSGATEWAY_CLOCK": "yes"]) }
        #expect(error?.category == .invalidInput && error?.message.contains("neither trusted nor untrusted") == true)
    }

    /// timedated's properties, as its stand-in on a private bus answers them.
    final class Timedated: Sendable {
        let ntp = Mutex(true)
        let synchronized = Mutex(false)
    }

    @Test("timedated on the bus: NTP on and not synchronised is waiting, NTPSynchronized is synchronised, NTP off is nothing; no timedated, the files")
    func timedated() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let run = try Self.directory()
        defer { try? FileManager.default.removeItem(at: run) }
        let state = Timedated()
        let server = try BusConnection(.address(bus.address))
        defer { server.close() }
        let evidence = SystemClockEvidence(store: nil, timedatedBus: .address(bus.address), environment: [:], runDirectory: run.path, asksKernel: false)
        // Not on the bus yet: the files decide (none here).
        #expect(try await evidence.evidence().timeSync == TimeSyncState.none)

        try await server.requestName("org.freedesktop.timedate1")
        try server.export(path: "/org/freedesktop/timedate1", interfaces: [DBusInterface("org.freedesktop.timedate1", properties: [
            DBusProperty("NTP", "b", get: { .boolean(state.ntp.withLock { $0 }) }),
            DBusProperty("NTPSynchronized", "b", get: { .boolean(state.synchronized.withLock { $0 }) }),
            DBusProperty("CanNTP", "b", get: { .boolean(true) }),
        ])])
        let waiting = try await evidence.evidence()
        #expect(waiting.timeSync == .waiting(service: "the NTP service timedated reports (NTP=yes)") && waiting.kernelSynchronized == nil)
        #expect(ClockTrust.decide(waiting).distrust != nil)
        state.synchronized.withLock { $0 = true }
        #expect(try await evidence.trust() == .trusted(.synchronized))
        state.synchronized.withLock { $0 = false }
        state.ntp.withLock { $0 = false }
        #expect(try await evidence.evidence().timeSync == TimeSyncState.none)
    }

    @Test("the newest stamp in the store: a record's arrival, a watch last seen, a heart-rate sample; nil when empty")
    func newestStamp() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        #expect(try await store.newestStamp() == nil)
        let before = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        try await store.storeSleepRecords([SleepItem(stage: .light, start: 1_700_000_000, duration: 600)], watch: WatchID("AA:BB:CC:DD:EE:FF")!, cursor: nil)
        let stamp = try #require(try await store.newestStamp())
        #expect(stamp >= before && stamp <= Date())
        let later = Date() + 3600
        try await store.storeHeartRate([HeartRateSample(time: later, bpm: 60, sensorContact: .detected, energyExpended: nil, rrIntervals: [])], watch: WatchID("AA:BB:CC:DD:EE:FF")!)
        #expect(try await store.newestStamp() == Date(timeIntervalSince1970: later.timeIntervalSince1970.rounded(.down)))
        let evidence = try await SystemClockEvidence(store: store, timedatedBus: nil, environment: [:], runDirectory: directory.path, asksKernel: false).evidence()
        #expect(evidence.newestStamp == Date(timeIntervalSince1970: later.timeIntervalSince1970.rounded(.down)))
        #expect(ClockTrust.decide(evidence).distrust?.reason == .beforeNewestStamp(evidence.newestStamp!))
    }
}
