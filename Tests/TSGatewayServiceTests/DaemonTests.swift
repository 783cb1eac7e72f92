import Foundation
import TSDBus
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSStore
import TSTestSupport
import Testing

/// `tsgateway serve` as a process on a private bus, with simulated watches inside it.
@Suite("tsgateway serve", .serialized, .timeLimit(.minutes(3)))
struct DaemonTests {
    static let twoWatches = ["simulated: true\nname: sim-a", "simulated: true\nname: sim-b\nseed: 7"]

    @Test("two watches serve concurrent calls from several clients, and the CLI's output through the daemon equals its own")
    func concurrentClients() async throws {
        let daemon = try DaemonProcess(watches: Self.twoWatches)
        try await daemon.start()
        // Four CLI processes and twenty calls of an in-test client, all at once, on both watches.
        let client = GatewayClient(connection: try BusConnection(.address(daemon.bus.address)))
        defer { client.close() }
        // `info` through the daemon answers from what it learnt on connecting: until it has reached
        // a watch, that watch's info is "not reached yet" (exit 69), which under load came first.
        let ids = [WatchID("00:00:5E:00:54:01")!, WatchID("00:00:5E:00:54:02")!]
        #expect(try await eventually {
            for id in ids where try await client.watch(id).status().info == nil { return false }
            return true
        }, "the daemon did not reach both watches: \(daemon.log())")
        async let cliA = daemon.cli(["alarms", "get", "--device", "sim-a"])
        async let cliB = daemon.cli(["alarms", "get", "--device", "sim-b", "--json"])
        async let cliMonitor = daemon.cli(["monitor", "get", "heart-rate", "--device", "sim-b"])
        async let cliInfo = daemon.cli(["info", "--device", "00:00:5e:00:54:01", "--json"])
        let direct = try await withThrowingTaskGroup(of: [Alarm].self) { group in
            for index in 0..<20 {
                group.addTask { try await client.watch(WatchID(index % 2 == 0 ? "00:00:5E:00:54:01" : "00:00:5E:00:54:02")!).alarms() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let (a, b, monitor, info) = try await (cliA, cliB, cliMonitor, cliInfo)
        #expect(direct.count == 20)
        #expect(Set(direct.map { $0.map(\.label) }) == [["Work"]])
        #expect(a.status == 0, "\(a.stderr)")
        #expect(b.status == 0 && b.stdout.contains("\"watch\" : \"00:00:5E:00:54:02\""), "\(b.stdout) \(b.stderr)")
        #expect(monitor.status == 0 && monitor.stdout.contains("heartRate"), "\(monitor.stderr)")
        #expect(info.status == 0 && info.stdout.contains("\"model\" : \"TS-Sim W10\""), "\(info.stderr)")

        // The same command without the daemon (the CLI's own simulated watch) prints the same table.
        let local = try await daemon.cli(["alarms", "get", "--simulate"])
        #expect(local.status == 0, "\(local.stderr)")
        #expect(a.stdout == local.stdout)

        // Several watches and no --device: the CLI says which to choose.
        let ambiguous = try await daemon.cli(["alarms", "get"])
        #expect(ambiguous.status == 80)
        #expect(ambiguous.stderr.contains("several watches") && ambiguous.stderr.contains("sim-a (00:00:5E:00:54:01)"))

        // A change through one client is what the next client reads.
        let added = try await daemon.cli(["alarms", "add", "21:15", "--label", "Read", "--device", "sim-b"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await client.watch(WatchID("00:00:5E:00:54:02")!).alarms().map(\.label) == ["Work", "Read"])
        #expect(try await client.watch(WatchID("00:00:5E:00:54:01")!).alarms().map(\.label) == ["Work"])
        await daemon.cleanUp()
    }

    @Test("a watch-side alarm edit reaches every subscriber")
    func watchSideEditReachesEverySubscriber() async throws {
        let daemon = try DaemonProcess(watches: Self.twoWatches)
        try await daemon.start()
        // Subscribers: two `alarms watch` processes, an `events` process and a signal match in this process.
        async let watcher1 = daemon.cli(["alarms", "watch", "--json", "--count", "1", "--device", "sim-a"])
        async let watcher2 = daemon.cli(["alarms", "watch", "--json", "--count", "1", "--device", "sim-a"])
        async let events = daemon.cli(["events", "--type", "alarmsChanged", "--count", "2"])
        let connection = try BusConnection(.address(daemon.bus.address))
        defer { connection.close() }
        let signals = try await connection.signals(SignalMatch(interface: GatewayBusAPI.watchInterface, member: "AlarmsChanged"))
        // Give the three processes time to subscribe, then edit on both simulated watches.
        try await Task.sleep(for: .seconds(2))
        daemon.signal(SIGUSR1)
        var received: [String: String] = [:]
        for await signal in signals {
            received[signal.path] = signal.arguments.last?.stringValue
            if received.count == 2 { break }
        }
        #expect(received == [GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:01")!): "watch", GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:02")!): "watch"])
        let (one, two, lines) = try await (watcher1, watcher2, events)
        for result in [one, two] {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("\"origin\":\"watch\""), "\(result.stdout)")
        }
        #expect(lines.status == 0, "\(lines.stderr)")
        let decoded = try lines.stdout.split(separator: "\n").map { try GatewayEvent.decode(json: String($0)) }
        #expect(Set(decoded.map(\.watch.rawValue)) == ["00:00:5E:00:54:01", "00:00:5E:00:54:02"])
        #expect(decoded.allSatisfy { $0.type == .alarmsChanged && $0.alarmOrigin == .watch })
        await daemon.cleanUp()
    }

    @Test("with the shipped bus policy, a caller outside root and the tsgateway group may read but not change",
          .enabled(if: getuid() == 0, "needs root to run a client as another user"))
    func policyDeniedCaller() async throws {
        let policy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("udev/org.tsgateway.conf").path
        let bus = try PrivateBus(includingPolicy: policy)
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: sim-a"], bus: bus)
        try await daemon.start()
        // The binary must be reachable by the other user: run a copy from the daemon's directory.
        let copy = daemon.directory.appendingPathComponent("tsgateway")
        try FileManager.default.copyItem(at: try #require(DaemonProcess.binary), to: copy)
        let nobody: UInt32 = 65534
        let environment = ["XDG_DATA_HOME": daemon.directory.appendingPathComponent("nobody").path]
        let read = try await daemon.cli(["alarms", "get"], asUser: nobody, environment: environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("Work"))
        let change = try await daemon.cli(["alarms", "add", "10:00", "--label", "Denied"], asUser: nobody, environment: environment)
        #expect(change.status == 77)
        #expect(change.stderr.contains("only root and members of the tsgateway group may change the watch"), "\(change.stderr)")
        let sync = try await daemon.cli(["sleep", "sync", "--since", "1d"], asUser: nobody, environment: environment)
        #expect(sync.status == 77, "\(sync.stderr)")
        // Nothing changed; root may change it.
        let client = GatewayClient(connection: try BusConnection(.address(bus.address)))
        defer { client.close() }
        #expect(try await client.watch(WatchID("00:00:5E:00:54:01")!).alarms().map(\.label) == ["Work"])
        let asRoot = try await daemon.cli(["alarms", "add", "10:00", "--label", "Allowed"])
        #expect(asRoot.status == 0, "\(asRoot.stderr)")
        #expect(try await client.watch(WatchID("00:00:5E:00:54:01")!).alarms().map(\.label) == ["Work", "Allowed"])
        await daemon.cleanUp()
    }

    /// A slow simulated watch, so that a sync is under way when the daemon is stopped.
    static let slowWatch = "simulated: true\nname: slow\nseed: 11\nhistory-days: 30\npacket-delay: 300ms"

    @Test("SIGTERM during a sync stops cleanly with nothing lost; the next start finishes the sync")
    func sigtermDuringSync() async throws {
        try await interruptedSync(signal: SIGTERM)
    }

    @Test("kill -9 during a sync, then a restart, finishes the sync with nothing lost or duplicated; the open session gets an unexpected end")
    func killDuringSync() async throws {
        try await interruptedSync(signal: SIGKILL)
    }

    func interruptedSync(signal: Int32) async throws {
        let daemon = try DaemonProcess(watches: [Self.slowWatch + "\nlive-stage-interval: 1s"], extraConfig: "sync-interval: 1h")
        let watchId = WatchID("00:00:5E:00:54:01")!
        let truth = daemon.groundTruth(seed: 11, days: 30)
        try #require(truth.count > 300)
        try await daemon.start()
        let store = try daemon.store()
        // Part of the first sync is stored, and a live session is open.
        #expect(try await eventually { try await store.sleepRecords(watch: watchId).count >= 60 })
        #expect(try await eventually { try await !store.sessions(watch: watchId, states: [.open]).isEmpty })
        let before = try await store.sleepRecords(watch: watchId).count
        try #require(before < truth.count, "the sync finished before the daemon was stopped; slow the watch down")
        daemon.signal(signal)
        let status = try await daemon.waitForExit()
        if signal == SIGTERM {
            #expect(status == 0, "\(daemon.log())")
            #expect(daemon.log().contains("stopped"))
        }
        // What is stored is exactly the watch's records up to the cursor: no gap, nothing extra.
        let stored = try await store.sleepRecords(watch: watchId)
        let cursor = try #require(try await store.syncCursor(watch: watchId))
        #expect(Set(stored).isSubset(of: Set(truth)))
        #expect(stored.count == Set(stored).count)
        #expect(Set(truth.filter { $0.start < cursor.upTo }) == Set(stored.filter { $0.start < cursor.upTo }))
        let left = try #require(try await store.sessions(watch: watchId).first)
        if signal == SIGTERM {
            #expect(left.state == .open && left.interrupted && left.unexpectedEndTime == nil)
        } else {
            #expect(left.state == .open && !left.interrupted)
        }

        try await daemon.start()
        #expect(try await eventually(timeout: .seconds(90)) { try await store.sleepRecords(watch: watchId).count == truth.count }, "\(daemon.log())")
        let after = try await store.sleepRecords(watch: watchId)
        #expect(Set(after) == Set(truth))
        #expect(after.count == truth.count)
        if signal == SIGKILL {
            let recovered = try #require(try await store.sessions(watch: watchId).first { $0.id == left.id })
            #expect(recovered.state != .open)
            #expect(recovered.unexpectedEndTime != nil)
            #expect(recovered.unexpectedEndTime.map { $0 >= left.startTime } == true)
        }
        await daemon.cleanUp()
    }

    @Test("a live night: session opened, stages streamed, closed at the wake-up, complete after the next sync; `session status` shows it")
    func liveSession() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: night\nhistory-days: 2\nlive-stage-interval: 100ms"])
        try await daemon.start()
        // The simulated nights repeat; `events` may join in the middle of one (a busy machine starts
        // it late), so eight events hold at least one whole night, from its opening on.
        let events = try await daemon.cli(["events", "--device", "night", "--type", "session", "--type", "fellAsleep", "--type", "wokeUp", "--count", "8"])
        #expect(events.status == 0, "\(events.stderr)")
        // It says on stderr when it listens (scripts wait for that before they act); stdout is JSON lines only.
        #expect(events.stderr.contains("listening for events of tsgateway serve"), "\(events.stderr)")
        let all = try events.stdout.split(separator: "\n").map { try GatewayEvent.decode(json: String($0)) }
        let opened = try #require(all.firstIndex { $0.sessionChange == .opened }, "\(events.stdout)")
        let decoded = Array(all[opened...].prefix(4))
        #expect(decoded.map(\.type) == [.session, .fellAsleep, .wokeUp, .session])
        #expect(decoded.first?.sessionChange == .opened && decoded.last?.sessionChange == .closed)
        let closed = try #require(decoded.last?.session)
        #expect(closed.state == .closed && closed.fellAsleepAt != nil && closed.wokeUpAt != nil)

        // A sync that reaches past the wake-up completes the session.
        let sync = try await daemon.cli(["sleep", "sync", "--since", "1d", "--device", "night"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let store = try daemon.store()
        #expect(try await eventually { try await store.sessions(watch: WatchID("00:00:5E:00:54:01")!).first { $0.id == closed.id }?.state == .complete })
        let status = try await daemon.cli(["session", "status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try GatewayBusAPI.decode(SessionReport.self, json: status.stdout)
        #expect(report.watch == WatchID("00:00:5E:00:54:01"))
        #expect(report.session != nil && !report.stages.isEmpty)
        await daemon.cleanUp()
    }

    @Test("the CLI explains a missing daemon, and serve refuses a second instance")
    func missingDaemonAndSecondInstance() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: sim-a"])
        let none = try await daemon.cli(["events"])
        #expect(none.status == 69)
        #expect(none.stderr.contains("tsgateway serve is not running"))
        try await daemon.start()
        let second = try await daemon.cli(["serve", "--config", daemon.configPath])
        #expect(second.status == 69)
        #expect(second.stderr.contains("is `tsgateway serve` already running?"), "\(second.stderr)")
        await daemon.cleanUp()
    }

    @Test("introspection equals protocol-spec/dbus-api.md; ObjectManager and properties describe both watches")
    func introspectionAndProperties() async throws {
        let daemon = try DaemonProcess(watches: Self.twoWatches)
        try await daemon.start()
        let connection = try BusConnection(.address(daemon.bus.address))
        defer { connection.close() }
        let doc = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol-spec/dbus-api.md").path, encoding: .utf8)
        func interface(_ name: String, in text: String) -> String? {
            guard let start = text.range(of: "<interface name=\"\(name)\">"),
                  let end = text.range(of: "</interface>", range: start.upperBound..<text.endIndex) else { return nil }
            return text[start.lowerBound..<end.upperBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
        }
        for (path, name) in [(GatewayBusAPI.rootPath, GatewayBusAPI.gatewayInterface), (GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:01")!), GatewayBusAPI.watchInterface)] {
            let live = try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            let xml = try #require(live.first?.stringValue)
            let documented = try #require(interface(name, in: doc), "protocol-spec/dbus-api.md lacks \(name)")
            #expect(interface(name, in: xml) == documented)
        }
        let objects = try #require(try await connection.call(destination: GatewayBusAPI.busName, path: GatewayBusAPI.rootPath,
                                                             interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects").first?.managedObjectsValue)
        #expect(Set(objects.keys) == [GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:01")!), GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:02")!)])
        let path = GatewayBusAPI.path(forWatch: WatchID("00:00:5E:00:54:02")!)
        func properties() async throws -> DBusProperties {
            try #require(try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                                   member: "GetAll", [.string(GatewayBusAPI.watchInterface)]).first?.propertiesValue)
        }
        // Connected, the first sync done and the battery read: the properties say so.
        #expect(try await eventually { let p = try await properties(); return p["Connected"]?.boolValue == true && (p["LastSync"]?.int64Value ?? 0) > 0 && p["BatteryLevel"]?.byteValue == 82 })
        let current = try await properties()
        #expect(current["Name"]?.stringValue == "sim-b" && current["Model"]?.stringValue == "TS-Sim W10" && current["Simulated"]?.boolValue == true)
        #expect(current["Capabilities"]?.propertiesValue?["Alarms"]?.propertiesValue?["MaxCount"]?.uint32Value == 10)
        #expect(current["Capabilities"]?.propertiesValue?["MonitorTypes"]?.stringArrayValue?.contains("heartRate") == true)
        // Writes to properties are refused.
        await #expect(throws: BusError.self) {
            try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                      member: "Set", [.string(GatewayBusAPI.watchInterface), .string("Name"), .variant(.string("x"))])
        }
        // Bad arguments get a specific error.
        let badJSON = await #expect(throws: BusError.self) {
            try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: GatewayBusAPI.watchInterface, member: "SetAlarms", [.string("{not json")])
        }
        #expect(badJSON?.name == GatewayBusAPI.errorPrefix + ErrorCategory.invalidInput.rawValue)
        let badDates = await #expect(throws: BusError.self) {
            try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: GatewayBusAPI.watchInterface, member: "DailySleep",
                                      [.string("2026-11-20"), .string("2026-11-01"), .properties([:])])
        }
        #expect(badDates?.message.contains("the first not after the second") == true)
        await daemon.cleanUp()
    }

    @Test("a watch whose link keeps dropping is reconnected with backoff and stays usable")
    func reconnects() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: flaky\nhistory-days: 1\ndisconnect-every: 25"])
        try await daemon.start()
        // The link drops after every 25 packets; the calls below make the packets.
        async let events = daemon.cli(["events", "--type", "connection", "--count", "2"], timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(500))
        var answered = 0
        for _ in 0..<12 where try await daemon.cli(["alarms", "get", "--device", "flaky"]).status == 0 { answered += 1 }
        // Between drops, calls go through (reconnecting when needed).
        #expect(answered >= 6, "\(daemon.log())")
        let seen = try await events
        #expect(seen.status == 0, "\(seen.stderr)")
        let decoded = try seen.stdout.split(separator: "\n").map { try GatewayEvent.decode(json: String($0)) }
        // Losses and reconnects alternate.
        #expect(decoded.contains { $0.connected == false && $0.reason?.contains("link lost after 25 packets") == true }, "\(seen.stdout)")
        #expect(decoded.contains { $0.connected == true }, "\(seen.stdout)")
        await daemon.cleanUp()
    }

    @Test("serve uploads each synced night once; a restart and a re-sync upload nothing again; outbox status shows it")
    func uploadsThroughTheDaemon() async throws {
        let server = try ScriptedServer(script: ["then": "dedup"])
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: up\nhistory-days: 5"], extraConfig: """
            upload:
              endpoint: \(server.endpoint.absoluteString)
              token: test-token
              interval: 200ms
              retry-min: 50ms
            """)
        try await daemon.start()
        // Until the first sync's nights have all gone: none pending, and `outbox status` counts as
        // synced exactly what the server holds (a count taken while the last were still on their
        // way, under load, made this test fail).
        var first: [String] = []
        var status = ""
        #expect(try await eventually {
            first = try server.sourceIds()
            guard first.count >= 4 else { return false }
            let outbox = try await daemon.cli(["outbox", "status", "--config", daemon.configPath, "--json"])
            status = outbox.stdout + outbox.stderr
            return outbox.status == 0 && outbox.stdout.contains("\"pending\" : 0") && outbox.stdout.contains("\"synced\" : \(first.count)")
        }, "the outbox: \(status)\nthe server: \(first)\n\(daemon.log())")
        #expect(Set(first).count == first.count)
        #expect(first.allSatisfy { $0.hasPrefix("00:00:5E:00:54:01:") })
        let request = try #require(try server.requests().first)
        #expect((request["headers"] as? [String: Any])?["authorization"] as? String == "Bearer test-token")

        await daemon.stop()
        try await daemon.start()
        let sync = try await daemon.cli(["sleep", "sync", "--since", "7d"])
        #expect(sync.status == 0, "\(sync.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(try server.sourceIds() == first, "nothing is uploaded twice")
        await daemon.cleanUp()
    }

    @Test("heart rate: each sample is a D-Bus signal, an event and a stored row; `hr watch` follows it through the daemon; a watch without Heart Rate says not supported")
    func heartRateThroughTheDaemon() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: beating\nheart-rate-interval: 50ms", "simulated: true\nname: plain\nstandard-services: false"],
                                       extraConfig: "heart-rate-retention: 2h")
        try await daemon.start()
        let client = GatewayClient(connection: try BusConnection(.address(daemon.bus.address)))
        defer { client.close() }
        let watchId = WatchID("00:00:5E:00:54:01")!
        let signals = try await client.watch(watchId).heartRateSamples()
        var received: [HeartRateSample] = []
        for try await sample in signals {
            received.append(sample)
            if received.count == 3 { break }
        }
        #expect(received.allSatisfy { (50...80).contains($0.bpm) && $0.sensorContact == .detected && $0.rrIntervals.count == 1 },
                "the simulated heart beats at its stage's rate: \(received)")

        let followed = try await daemon.cli(["hr", "watch", "--device", "beating", "--count", "3", "--json", "-v"])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(followed.stderr.contains("going through its D-Bus API"))
        let lines = followed.stdout.split(separator: "\n").compactMap { try? GatewayEvent.decode(json: String($0)) }
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { if case .heartRate = $0.kind { $0.watch == watchId } else { false } }, "the lines are heartRate events: \(followed.stdout)")

        let events = try await daemon.cli(["events", "--type", "heartRate", "--count", "2"], timeout: .seconds(30))
        #expect(events.status == 0 && events.stdout.split(separator: "\n").count == 2, "\(events.stdout) \(events.stderr)")

        let status = try await client.watch(watchId).status()
        #expect(status.heartRate.map { (50...80).contains($0) } == true, "GetInfo carries the last heart rate")

        _ = try await daemon.cli(["info", "--device", "plain"])
        let unsupported = try await daemon.cli(["hr", "watch", "--device", "plain", "--count", "1"])
        #expect(unsupported.status == 79, "\(unsupported.stderr)")
        #expect(unsupported.stderr.contains("no Heart Rate service; it offers protocol v1"), "\(unsupported.stderr)")

        // Stored a few at a time while connected; the rest when the daemon stops.
        await daemon.stop()
        let stored = try await daemon.store().heartRate(watch: watchId)
        #expect(stored.count >= received.count + 3, "\(stored.count) samples stored")
        #expect(Set(stored.map(\.time)).count == stored.count, "each sample is stored once")
        let lastReceived = try #require(received.last)
        #expect(stored.contains { abs($0.time.timeIntervalSince(lastReceived.time)) < 0.002 && $0.bpm == lastReceived.bpm }, "a signalled sample is in the store")
        await daemon.cleanUp()
    }

    @Test("a band with the standard services only is served for what it has (battery, clock, heart rate); the rest says not supported")
    func standardServicesOnlyWatch() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: band\nprotocol-v1: false\nheart-rate-interval: 50ms"])
        try await daemon.start()
        let info = try await daemon.cli(["info", "--device", "band", "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any], "\(info.stdout)")
        #expect(object["services"] as? [String] == ["device-information", "battery", "current-time", "heart-rate"])
        #expect((object["battery"] as? [String: Any])?["level"] as? Int == 82)

        for arguments in [["alarms", "get"], ["sleep", "sync"], ["monitor", "get", "heart-rate"]] {
            let refused = try await daemon.cli(arguments + ["--device", "band"])
            #expect(refused.status == 79, "`\(arguments.joined(separator: " "))`: \(refused.stderr)")
            #expect(refused.stderr.contains("no protocol v1"), "\(refused.stderr)")
        }
        let time = try await daemon.cli(["time", "sync", "--device", "band"])
        #expect(time.status == 0, "Current Time is written: \(time.stderr)")
        let followed = try await daemon.cli(["hr", "watch", "--device", "band", "--count", "2"])
        #expect(followed.status == 0 && followed.stdout.contains("bpm"), "\(followed.stdout) \(followed.stderr)")

        await daemon.stop()
        #expect(try await daemon.store().heartRate(watch: WatchID("00:00:5E:00:54:01")!).count >= 2)
        #expect(!daemon.log().contains("scheduled sync failed"), "a band without protocol v1 is not synced on schedule")
        await daemon.cleanUp()
    }

    @Test("the night in its event vocabulary: events of type night, and Night D-Bus signals follow a live night in order")
    func nightEvents() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: night\nhistory-days: 2\nlive-stage-interval: 100ms"])
        try await daemon.start()
        let client = GatewayClient(connection: try BusConnection(.address(daemon.bus.address)))
        defer { client.close() }
        let signals = try await client.watch(WatchID("00:00:5E:00:54:01")!).nightEvents()
        // A night may be half over when `events` joins: 24 events hold a whole one from its start.
        let events = try await daemon.cli(["events", "--device", "night", "--type", "night", "--count", "24"])
        #expect(events.status == 0, "\(events.stderr)")
        let names = try events.stdout.split(separator: "\n").map { line -> String in
            let event = try GatewayEvent.decode(json: String(line))
            guard case let .night(night) = event.kind else { return "not a night event: \(line)" }
            return night.name.rawValue
        }
        let start = try #require(names.firstIndex(of: "sleep_tracking_started"), "\(names)")
        #expect(Array(names[start...].prefix(11)) == ["sleep_tracking_started", "fell_asleep", "light_sleep", "deep_sleep", "light_sleep", "rem",
                                                      "light_sleep", "deep_sleep", "rem", "woke_up", "sleep_tracking_stopped"])
        var signalled: [NightEvent] = []
        for try await (event, _) in signals {
            signalled.append(event)
            if signalled.count == 11 { break }
        }
        #expect(Set(signalled.map(\.name)).isSubset(of: Set(names.compactMap(NightEvent.Name.init(rawValue:)))))
        #expect(signalled.contains { $0.name == .deepSleep && $0.stage == .deep }, "phase signals carry their stage: \(signalled)")
        await daemon.cleanUp()
    }

    @Test("smart wake from the gateway: light sleep inside an alarm's gateway window makes the watch ring once; the decision is an event; a restart inside the window does not ring again")
    func gatewaySmartWake() async throws {
        // The gateway's window is on slot 1: the simulated watch's own alarm in slot 0 (06:45 on
        // workdays) must not ring when the test runs between 06:15 and 06:45 UTC.
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: sleeper\nlive-stage-interval: 200ms\nsmart-wake: {1: 30}"])
        try await daemon.start()
        // An alarm ten minutes from now (UTC, as the daemon's time zone): now is inside its 30-minute window.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let alarmAt = Date() + 600
        let parts = calendar.dateComponents([.hour, .minute], from: alarmAt)
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        // The simulated night starts light: the gateway rings inside the window (`events` listens first).
        async let listened = daemon.cli(["events", "--type", "smartWake", "--count", "1"], timeout: .seconds(60))
        try await Task.sleep(for: .seconds(2))
        let set = try await daemon.cli(["alarms", "add", time, "--repeat", "everyday", "--label", "Smart", "--device", "sleeper"])
        #expect(set.status == 0, "\(set.stderr)")
        let decided = try await listened
        #expect(decided.status == 0, "\(decided.stderr)\n\(daemon.log())")
        let event = try GatewayEvent.decode(json: decided.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        guard case let .smartWake(slot, alarmTime, outcome, stage) = event.kind else {
            Issue.record("not a smartWake event: \(decided.stdout)")
            return
        }
        #expect(slot == 1 && outcome == .rang && (stage == .light || stage == .awake))
        #expect(abs(alarmTime.timeIntervalSince(alarmAt)) < 60)
        #expect(daemon.log().contains("smart wake window of alarm 1"))
        let store = try daemon.store()
        #expect(try await store.settledSmartWakes(watch: WatchID("00:00:5E:00:54:01")!, since: Date() - 3600).map(\.outcome) == [.rang])

        // Restarted inside the same window, the gateway finds the ringing settled and leaves it.
        await daemon.stop()
        try await daemon.start()
        let quiet = try await daemon.cli(["events", "--type", "smartWake"], timeout: .seconds(30), interruptAfter: .seconds(6))
        #expect(quiet.stdout.isEmpty, "no second ring: \(quiet.stdout)")
        #expect(try await store.settledSmartWakes(watch: WatchID("00:00:5E:00:54:01")!, since: Date() - 3600).count == 1)
        await daemon.cleanUp()
    }
}
