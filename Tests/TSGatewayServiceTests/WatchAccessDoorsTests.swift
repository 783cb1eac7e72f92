import Foundation
import Logging
import TSDevice
import TSFamilies
import TSFamilyKit
@testable import TSGatewayService
import TSModels
import TSSleep
import TSStore
import TSWatchService
import Testing

/// The CLI's in-process door (`WatchOperations`) and the daemon's (`WatchSupervisor`, which the
/// D-Bus service and the MQTT bridge dispatch through) are two implementations of one protocol,
/// `WatchAccess` (issue 43): the same operations, by the same names, give the same results.
@Suite("both doors are one protocol")
struct WatchAccessDoorsTests {
    static let seed: UInt64 = 43
    static let days = 3

    struct Seen: Equatable {
        var model: String
        var dialect: Dialect?
        var capabilities: WatchCapabilities?
        var alarmsAfterSet: [Alarm]
        var monitor: MonitorConfig?
        var stored: Int
        var days: Int
        var syncedOnce: Bool
    }

    /// What one door answers to the same requests, as the protocol's caller sees it.
    static func use(_ door: any WatchAccess, at now: Date) async throws -> Seen {
        let info = try await door.info()
        let capabilities = try await door.capabilities()
        let table = [Alarm(slot: 0, label: "Doors", hour: 7, minute: 5, repeatDays: .workdays)]
        try await door.setAlarms(table)
        let alarms = try await door.alarms()
        var monitor: MonitorConfig?
        if capabilities?.monitorTypes.contains(.heartRate) == true {
            var config = try await door.monitorConfig(.heartRate)
            config.schedule.intervalMinutes = 15
            try await door.setMonitorConfig(config)
            monitor = try await door.monitorConfig(.heartRate)
        }
        let report = try await door.syncSleep(SyncRequest(from: Int64(now.timeIntervalSince1970) - Int64(days + 1) * 86_400), progress: nil)
        let clock = LocalDayClock(timeZone: .current)
        let last = clock.localDateAndHour(of: Int64(now.timeIntervalSince1970)).date, first = clock.adding(days: -days, to: last)
        let daily = try await door.dailySleep(first: first, last: last, timeZone: nil, rule: nil)
        return Seen(model: info.model, dialect: info.dialect, capabilities: capabilities, alarmsAfterSet: alarms, monitor: monitor,
                    stored: report.stored, days: daily.days.count, syncedOnce: try await door.lastSync() != nil)
    }

    @Test("the same requests through WatchOperations and through WatchSupervisor give the same results", arguments: [Dialect.protocolV1, .npk])
    func bothDoorsAnswerAlike(_ dialect: Dialect) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-doors-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date()

        var options = SimulatedWatchOptions()
        options.seed = Self.seed
        options.historyDays = Self.days
        options.now = now
        let opened = try WatchFamilies.openSimulated(options, dialect: dialect)
        let inProcess = WatchOperations(watch: opened.central, store: try GatewayStore(path: directory.appendingPathComponent("cli.sqlite").path),
                                        watchId: WatchID("AA:BB:CC:DD:EE:01")!, policy: WatchPolicy())
        let cli = try await Self.use(inProcess, at: now)
        await opened.central.disconnect()

        var configuration = try GatewayConfiguration.parse("""
            watches:
              - simulated: true
                dialect: \(dialect)
                seed: \(Self.seed)
                history-days: \(Self.days)
            """, file: "doors.yaml")
        configuration.database = directory.appendingPathComponent("daemon.sqlite").path
        let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "doors"))
        let supervisor = try #require(try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database)).first)
        let served = try await Self.use(supervisor, at: now)
        await supervisor.watch.disconnect()

        #expect(served == cli, "daemon: \(served)\nCLI: \(cli)")
        #expect(cli.stored > 0 && cli.syncedOnce)
    }

    @Test("a front door's heart-rate stream through the supervisor gets what the supervisor follows, and ends when it stops")
    func heartRateThroughTheSupervisor() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-doors-hr-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try GatewayConfiguration.parse("""
            watches:
              - simulated: true
                heart-rate-interval: 20ms
                live-stage-interval: 50ms
            """, file: "doors.yaml")
        configuration.database = directory.appendingPathComponent("daemon.sqlite").path
        let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "doors"))
        let supervisor = try #require(try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database)).first)
        let door: any WatchAccess = supervisor
        let samples = try await door.heartRateSamples()
        let running = Task { await supervisor.run() }
        var seen: [HeartRateSample] = []
        for try await sample in samples {
            seen.append(sample)
            if seen.count == 3 { break }
        }
        running.cancel()
        await running.value
        #expect(seen.count == 3)
        #expect(seen.allSatisfy { (30...220).contains($0.bpm) }, "\(seen)")
        #expect(supervisor.heartRateReaders.subscriberCount == 0, "the reader that stopped reading is gone")
    }
}
