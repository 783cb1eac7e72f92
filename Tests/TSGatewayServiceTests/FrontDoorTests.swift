import Foundation
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSStore
import TSTestSupport
import Testing

/// The CLI's own link and `tsgateway serve` are two front doors over one watch service: the
/// same operations through either give the same results, and what one door used to do alone
/// (honour --reconnects, feed the outbox) both do.
@Suite("the two front doors", .serialized, .timeLimit(.minutes(3)))
struct FrontDoorTests {
    /// The daemon's simulated watch is the CLI's own simulated watch: same address, name, seed,
    /// history and zone (DaemonProcess pins the simulator's clock and TZ=UTC for both).
    static let sameWatchAsTheCLIs = "simulated: true\naddress: 00:00:5E:00:53:01\nname: Simulated watch\nhistory-days: 90"

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test("the same commands through the CLI's own link and through tsgateway serve give the same results")
    func sameOperationsThroughBothDoors() async throws {
        let daemon = try DaemonProcess(watches: [Self.sameWatchAsTheCLIs])
        try await daemon.start()
        let calendar = { var calendar = Calendar(identifier: .gregorian); calendar.timeZone = TimeZone(identifier: "UTC")!; return calendar }()
        func day(_ offset: Int) -> String {
            let date = calendar.date(byAdding: .day, value: offset, to: daemon.simulatorNow)!
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        }
        // Each step with the keys its JSON output may differ in (when a door last synced).
        let steps: [(arguments: [String], ignoring: Set<String>)] = [
            (["alarms", "set", "07:00", "--repeat", "workdays", "--label", "Work", "--smart", "30"], []),
            (["alarms", "add", "09:30", "--repeat", "weekends", "--label", "Weekend", "--snooze"], []),
            (["alarms", "disable", "1"], []),
            (["alarms", "get", "--json"], []),
            (["monitor", "set", "heart-rate", "--window", "08:00-22:00", "--interval", "10", "--alert-high", "120", "--alert-low", "45"], []),
            (["monitor", "get", "heart-rate", "--json"], []),
            // The daemon's first sync stored these records already and a sync resumes past what
            // is stored, so the counts differ; what was synced is compared by `sleep show` next.
            (["sleep", "sync", "--from", day(-6), "--to", day(-1), "--json"], ["fetched", "stored"]),
            (["sleep", "show", "--date", day(-2), "--json"], []),
            (["info", "--json"], ["lastSync"]),
        ]
        for (arguments, ignoring) in steps {
            let own = try await daemon.cli(["--simulate"] + arguments)
            // `sleep show` reads the daemon's database through DailySleep and has no -v.
            let readsOnly = arguments.starts(with: ["sleep", "show"])
            let served = try await daemon.cli((readsOnly ? [] : ["-v"]) + arguments)
            #expect(own.status == 0, "own link, \(arguments): \(own.stderr)")
            #expect(served.status == 0, "through serve, \(arguments): \(served.stderr)")
            #expect(readsOnly || served.stderr.contains("is served by tsgateway serve"), "\(arguments) did not go through the daemon: \(served.stderr)")
            guard arguments.contains("--json") else {
                #expect(own.stdout == served.stdout, "\(arguments)")
                continue
            }
            var ownObject = try Self.object(own.stdout), servedObject = try Self.object(served.stdout)
            for key in ignoring { ownObject[key] = nil; servedObject[key] = nil }
            // Compared as canonical JSON: Foundation's NSNumber equality tells a JSON `true` read twice apart.
            func canonical(_ object: [String: Any]) throws -> String {
                String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(try canonical(ownObject) == canonical(servedObject), "\(arguments):\nown \(own.stdout)\nserved \(served.stdout)")
        }
        await daemon.cleanUp()
    }

    @Test("what `alarms get --json` prints is what SetAlarms and `alarms set --file` take, through the daemon")
    func alarmJSONRoundTripsThroughTheDaemon() async throws {
        let daemon = try DaemonProcess(watches: [Self.sameWatchAsTheCLIs])
        try await daemon.start()
        #expect(try await daemon.cli(["alarms", "set", "06:15", "--repeat", "mon,wed", "--label", "Swim", "--snooze"]).status == 0)
        let printed = try await daemon.cli(["alarms", "get", "--json"])
        let file = daemon.directory.appendingPathComponent("alarms.json")
        try Data(printed.stdout.utf8).write(to: file)
        #expect(try await daemon.cli(["alarms", "set", "--file", file.path]).status == 0)
        let client = GatewayClient(connection: try .init(.address(daemon.bus.address)))
        defer { client.close() }
        // The printed document, whole, as SetAlarms' argument.
        try await client.watch(WatchID("00:00:5E:00:53:01")!).setAlarms(AlarmJSON.table(from: printed.stdout.utf8))
        let again = try await daemon.cli(["alarms", "get", "--json"])
        #expect(again.stdout == printed.stdout)
        let alarm = try #require((try Self.object(again.stdout)["alarms"] as? [[String: Any]])?.first)
        #expect(alarm["time"] as? String == "06:15" && alarm["repeat"] as? [String] == ["mon", "wed"] && alarm["snooze"] as? Bool == true)
        await daemon.cleanUp()
    }

    @Test("sleep sync --reconnects is honoured when the daemon serves the watch")
    func reconnectsThroughTheDaemon() async throws {
        // The link drops after every 25 packets: a 30-day sync needs reconnects.
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: flaky\nhistory-days: 30\ndisconnect-every: 25"],
                                       extraConfig: "sync-interval: 24h", firstSyncDays: 1)
        try await daemon.start()
        let refused = try await daemon.cli(["-v", "sleep", "sync", "--since", "30d", "--reconnects", "0"], timeout: .seconds(120))
        #expect(refused.stderr.contains("is served by tsgateway serve"), "\(refused.stderr)")
        #expect(refused.status == ExitCode.unavailable && refused.stderr.contains("disconnected"), "with no reconnect allowed the first drop ends the sync: \(refused.status) \(refused.stderr)")
        let allowed = try await daemon.cli(["sleep", "sync", "--since", "30d", "--reconnects", "100", "--json"], timeout: .seconds(120))
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect((try Self.object(allowed.stdout)["reconnects"] as? Int ?? 0) > 0, "\(allowed.stdout)")
        await daemon.cleanUp()
    }

    @Test("a sync by the CLI's own link enters the upload outbox of a database that feeds one")
    func theCLIsSyncFeedsTheOutbox() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-doors-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("tsgateway.sqlite").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // What `tsgateway serve` with an `upload:` section records in its database at start.
        try await GatewayStore(path: database).setUploadSetting(UploadSetting(timeZone: TimeZone(identifier: "UTC")!, statisticsRule: nil))
        // The CLI alone, no daemon on the rig's bus.
        let cli = try DaemonProcess(watches: [])
        let sync = try await cli.cli(["--simulate", "--db", database, "sleep", "sync", "--since", "7d", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let enqueued = try #require(try Self.object(sync.stdout)["enqueued"] as? Int)
        #expect(enqueued >= 5, "a week of finished nights: \(sync.stdout)")
        let status = try await cli.cli(["outbox", "status", "--db", database, "--json"])
        #expect(status.status == 0 && status.stdout.contains("\"pending\" : \(enqueued)"), "\(status.stdout) \(status.stderr)")

        // Without the setting (no `upload:`), a sync queues nothing.
        try await GatewayStore(path: database).setUploadSetting(nil)
        let other = directory.appendingPathComponent("other.sqlite").path
        let plain = try await cli.cli(["--simulate", "--db", other, "sleep", "sync", "--since", "7d", "--json"])
        #expect(try Self.object(plain.stdout)["enqueued"] as? Int == 0)
        await cli.cleanUp()
    }
}

/// Protocol v1.1's smart windows through `tsgateway serve`, on a watch that has them and on a
/// version-1 watch, with the same outcomes as over the CLI's own link.
@Suite("smart windows through the daemon", .serialized, .timeLimit(.minutes(3)))
struct SmartWindowDaemonTests {
    @Test("set and shown on a v1.1 watch; over its limit invalid; on a version-1 watch not supported; Capabilities says which")
    func smartWindowsThroughTheDaemon() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: smart", "simulated: true\nname: plain\nprotocol: 1.0"])
        try await daemon.start()
        let set = try await daemon.cli(["alarms", "set", "07:00", "--smart", "30", "--device", "smart"])
        #expect(set.status == 0, "\(set.stderr)")
        let printed = try FrontDoorTests.object(try await daemon.cli(["alarms", "get", "--json", "--device", "smart"]).stdout)
        #expect((printed["alarms"] as? [[String: Any]])?.first?["smart"] as? Int == 30)

        let tooLong = try await daemon.cli(["alarms", "set", "07:00", "--smart", "90", "--device", "smart"])
        #expect(tooLong.status == ExitCode.invalidInput, "\(tooLong.stderr)")
        #expect(tooLong.stderr.contains("smart window is 90 minutes, this watch's limit is 60"), "\(tooLong.stderr)")

        let refused = try await daemon.cli(["alarms", "set", "07:00", "--smart", "30", "--device", "plain"])
        #expect(refused.status == ExitCode.notSupported, "\(refused.stderr)")
        #expect(refused.stderr.contains("does not support smart wake windows"), "\(refused.stderr)")
        #expect(try await daemon.cli(["alarms", "set", "07:00", "--device", "plain"]).status == 0)

        let client = GatewayClient(connection: try .init(.address(daemon.bus.address)))
        defer { client.close() }
        let watches = try await client.watches()
        let smart = try #require(watches.first { $0.name == "smart" }?.info?.capabilities)
        let plain = try #require(watches.first { $0.name == "plain" }?.info?.capabilities)
        #expect(smart.maxSmartWindow == 60 && smart.ring && smart.alarmAlerts)
        #expect(plain.maxSmartWindow == 0 && !plain.ring && !plain.alarmAlerts)
        await daemon.cleanUp()
    }
}

/// Exit statuses the tests look for (README "Exit codes").
enum ExitCode {
    static let unavailable: Int32 = 69
    static let invalidInput: Int32 = 65
    static let notSupported: Int32 = 79
}
