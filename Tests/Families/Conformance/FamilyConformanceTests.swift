import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore
import TSTransport
import Testing

/// What every registered family with a simulated device must do, run for each of them: a new
/// family gets these tests by its registration line (issue 43). Its own folder's tests go further.
///
/// - it opens simulated and says who it is;
/// - an operation its capabilities lack is refused as not supported (exit 79) at once, without a
///   byte on the link;
/// - a sync of all its history stores exactly what its simulated device holds (the ground truth);
/// - a recorded sync replays to the same records, and its capture decoder reads every captured
///   value as a whole frame.
///
/// `LateAnswersTests` beside this runs each family's journey with the answers late.
@Suite("every family conforms")
struct FamilyConformanceTests {
    static let families = WatchFamilies.builtIn.filter { $0.simulated != nil }.map(\.name)
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 08:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    static let days = 3
    static let from = Int64(now.timeIntervalSince1970) - Int64(days + 1) * 86_400
    static let watchId = WatchID("AA:BB:CC:DD:EE:43")!

    static func options() -> SimulatedWatchOptions {
        var options = SimulatedWatchOptions()
        options.seed = 43
        options.now = now
        options.timeZone = zone
        options.historyDays = days
        return options
    }

    static func configuration(_ link: SimulatedLink) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        configuration.requestTimeout = .seconds(2)
        configuration.pageIdleTimeout = .seconds(2)
        configuration.pairingSecret = link.pairingSecret
        return configuration
    }

    /// The family's central over a recording of the link to its simulated device.
    struct Rig {
        var family: WatchFamily
        var device: any SimulatedDevice
        var recording: RecordingTransport
        var central: any WatchCentral
        var configuration: WatchConfiguration

        init(_ name: Dialect) throws {
            family = try WatchFamilies.named(name)
            let link = try #require(family.simulated).open(FamilyConformanceTests.options())
            device = link.device
            recording = RecordingTransport(recording: link.transport)
            configuration = FamilyConformanceTests.configuration(link)
            central = family.dialect.makeCentral(recording, configuration)
        }

        /// How many values went over the link (writes, reads, notifications) so far.
        func traffic() async -> Int {
            await recording.entries().filter { [.write, .notification, .read].contains($0.direction) }.count
        }
    }

    static func category(of error: any Error) -> ErrorCategory? { (error as? any CategorizedError)?.category }

    @Test("it opens simulated and says who it is", arguments: families)
    func itOpensAndSaysWhoItIs(_ name: Dialect) async throws {
        let rig = try Rig(name)
        let info = try await rig.central.connect()
        defer { Task { await rig.central.disconnect() } }
        #expect(!info.model.isEmpty)
        #expect(info.dialect == nil || info.dialect == name, "\(name) connected as \(String(describing: info.dialect))")
        #expect(await rig.central.isConnected)
        #expect(rig.central.dialect == name)
    }

    @Test("an operation its capabilities lack is refused as not supported, without a byte on the link", arguments: families)
    func whatItLacksIsRefusedAtOnce(_ name: Dialect) async throws {
        let rig = try Rig(name)
        _ = try await rig.central.connect()
        let central = rig.central
        let capabilities = await central.capabilities
        var lacking: [(String, @Sendable () async throws -> Void)] = []
        if capabilities.alarms == nil {
            lacking.append(("alarms", { _ = try await central.alarms() }))
            lacking.append(("setAlarms", { try await central.setAlarms([]) }))
        } else if capabilities.alarms?.readable == false {
            // A table that can only be set (a Garmin watch's) is not read back.
            lacking.append(("alarms", { _ = try await central.alarms() }))
        }
        if capabilities.sleepSync == nil { lacking.append(("sleepTransfer", { _ = try await central.sleepTransfer(start: Self.from, end: nil) })) }
        if !capabilities.ring { lacking.append(("ring", { _ = try await central.ring(slot: 0, purpose: .test) })) }
        if !capabilities.liveStages { lacking.append(("setLiveSleepEvents", { try await central.setLiveSleepEvents(true) })) }
        if !capabilities.heartRateHistory {
            lacking.append(("heartRateHistory", { for try await _ in try await central.heartRateHistory(start: Self.from, end: nil) {} }))
        }
        if !capabilities.clock { lacking.append(("syncTime", { try await central.syncTime() })) }
        if !capabilities.battery { lacking.append(("battery", { _ = try await central.battery() })) }
        for type in MonitorType.allCases where !capabilities.monitorTypes.contains(type) {
            lacking.append(("monitorConfig(\(type.name))", { _ = try await central.monitorConfig(type) }))
            lacking.append(("setMonitorConfig(\(type.name))", { try await central.setMonitorConfig(MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true))) }))
        }
        #expect(!lacking.isEmpty || capabilities.alarms != nil, "\(name) lacks nothing: every operation is checked by its own tests")
        for (operation, call) in lacking {
            let before = await rig.traffic()
            do {
                try await call()
                Issue.record("\(name): \(operation) is not among its capabilities but went through")
            } catch {
                #expect(Self.category(of: error) == .notSupported, "\(name): \(operation) failed as \(String(describing: Self.category(of: error))): \(error)")
            }
            #expect(await rig.traffic() == before, "\(name): \(operation) sent or waited for something before refusing")
        }
        await central.disconnect()
    }

    @Test("a sync of its whole history stores exactly what its simulated device holds", arguments: families)
    func aSyncEqualsTheGroundTruth(_ name: Dialect) async throws {
        let rig = try Rig(name)
        _ = try await rig.central.connect()
        guard await rig.central.capabilities.sleepSync != nil else {
            #expect(rig.device.sleepRecords.isEmpty, "\(name) holds sleep records it cannot hand over")
            await rig.central.disconnect()
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-conformance-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        var sync = SleepSync(watch: rig.central, store: store, watchId: Self.watchId)
        sync.firstBackoff = .milliseconds(20)
        let report = try await sync.run(from: Self.from)
        await rig.central.disconnect()
        let truth = rig.device.sleepRecords.filter { $0.start >= Self.from }
        #expect(!truth.isEmpty, "\(name)'s simulated device holds \(Self.days) days of sleep")
        let stored = try await store.sleepRecords(watch: Self.watchId)
        #expect(Set(stored) == Set(truth), "\(name): \(stored.count) stored, \(truth.count) held")
        #expect(stored.count == truth.count, "nothing stored twice")
        #expect(report.reconnects == 0)
    }

    @Test("a recorded sync replays to the same records, and every captured value decodes as a frame", arguments: families)
    func aCaptureDecodesAndReplays(_ name: Dialect) async throws {
        let rig = try Rig(name)
        _ = try await rig.central.connect()
        guard await rig.central.capabilities.sleepSync != nil else {
            await rig.central.disconnect()
            return
        }
        let records = try await rig.central.allSleepRecords(start: Self.from, end: nil)
        await rig.central.disconnect()
        #expect(!records.isEmpty)
        let entries = await rig.recording.entries()

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(name)-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try CaptureFile.write(entries, to: file)
        let replayed = rig.family.dialect.makeCentral(ReplayTransport(capture: try CaptureFile.read(from: file)), rig.configuration)
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: Self.from, end: nil) == records)
        await replayed.disconnect()

        let (_, decoder) = try #require(rig.family.dialect.capturable, "\(name) has no capture decoder")
        var session = decoder.reading(clockIn: Self.zone).session(started: Self.now)
        var frames: [DecodedFrame] = []
        for entry in entries where entry.characteristic == nil {
            switch entry.direction {
            case .write: frames += session.append(entry.bytes, channel: entry.pair, flow: .write)
            case .notification: frames += session.append(entry.bytes, channel: entry.pair, flow: .notification)
            default: continue
            }
        }
        let channels = Set(entries.map(\.pair))
        for channel in channels { for flow in [CaptureFlow.write, .notification] { frames += session.finish(channel: channel, flow: flow) } }
        #expect(!frames.isEmpty)
        let bad = frames.filter { $0.verdict != .frame }
        #expect(bad.isEmpty, "\(name): \(bad.count) of \(frames.count) not whole frames: \(bad.prefix(3).map(\.text))")
    }
}
