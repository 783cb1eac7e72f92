import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TSGatewayAPI
import TSGatewayService
import TSWatchService
import TSStore

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the gateway as a service: keep the configured watches connected and offer them on D-Bus.",
        discussion: """
            Connects to every watch in the configuration file and reconnects with backoff when a \
            link drops; syncs sleep on a schedule and on demand, sets each watch's clock daily, \
            reads its battery, follows live sleep sessions, and serves the D-Bus API \
            org.tsgateway (protocol-spec/dbus-api.md). While it runs, `tsgateway alarms get` and \
            the other device commands go through it. SIGTERM or SIGINT stop it cleanly.

            The configuration is YAML; udev/config.example.yaml explains every key. A watch with \
            `simulated: true` is simulated inside the daemon (for trying it out).

            Examples:
              tsgateway serve --config /etc/tsgateway/config.yaml
              tsgateway serve --config dev.yaml --bus session -v
              tsgateway serve --config /etc/tsgateway/config.yaml --check
            """)

    @Option(help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String = GatewayConfiguration.defaultPath
    @Option(help: ArgumentHelp("Override the file's bus: system or session (development).", valueName: "bus"))
    var bus: String?
    @Flag(help: "Check the configuration file, print what it sets up, and exit.")
    var check = false
    @Flag(name: [.short, .long], help: "Log more (-v: each connect, sync and reconnect; -vv: everything).")
    var verbose: Int

    func validate() throws {
        if let bus, GatewayConfiguration.BusKind(rawValue: bus) == nil { throw ValidationError("--bus must be system or session, got \"\(bus)\"") }
    }

    func run() async throws {
        var configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
        } catch {
            throw CLIFailure(error.description, status: .config)
        }
        if let bus { configuration.bus = GatewayConfiguration.BusKind(rawValue: bus) ?? configuration.bus }
        if check {
            print("\(config): OK")
            print("database \(configuration.database), \(configuration.bus.rawValue) bus, time zone \(configuration.timeZone.identifier)")
            for watch in configuration.watches {
                print("  \(watch.address)\(watch.name.map { " \($0)" } ?? "")\(watch.simulated ? " (simulated)" : "")\(watch.adapter.map { " on \($0)" } ?? "")")
            }
            if let mqtt = configuration.mqtt {
                print("MQTT \(mqtt.host):\(mqtt.port)\(mqtt.caFile != nil ? " (TLS)" : ""), topics \(mqtt.topicPrefix)/\(mqtt.gatewayId)/…, "
                      + (mqtt.discoveryPrefix.map { "Home Assistant discovery under \($0)/" } ?? "no discovery"))
            }
            if let upload = configuration.upload {
                print("uploads to \(upload.endpoint.absoluteString)\(upload.token != nil ? " with a bearer token" : "")")
            }
            if let report = configuration.report {
                let files = configuration.watches.map(ReportWriter.fileName(for:)).joined(separator: ", ")
                print("sleep reports of \(report.days) days every \(Int(report.every.timeInterval / 60)) min into \(report.directory) (mode 0\(String(report.mode, radix: 8))): \(files)")
            }
            return
        }
        // Before the daemon's threads start allocating; each thread's arena is made on its first allocation.
        DaemonHeap.limitArenas()
        let logger = Logging.logger("tsgateway.serve", verbose: verbose, quiet: .notice)
        let daemon = GatewayDaemon(configuration: configuration, logger: logger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: daemon, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch let error as ServiceGroupError {
            throw CLIFailure("stopped: \(error)", status: .software)
        } catch {
            throw CLIFailure.from(error)
        }
    }
}

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the events of the running `tsgateway serve` as JSON lines, until interrupted.",
        discussion: """
            One JSON object per line: {"type", "watch", "time", ...}. Types: connection, \
            alarmsChanged, sleepSynced, battery, heartRate (about one a second from a watch \
            with the Heart Rate service), liveStage, fellAsleep, wokeUp, session (with \
            "change": opened, interrupted, resumed, closed, completed, unexpectedEnd), night \
            (the night in one vocabulary, "event": sleep_tracking_started, fell_asleep, \
            light_sleep, deep_sleep, rem, awake, woke_up, sleep_tracking_stopped, ...).

            Examples:
              tsgateway events
              tsgateway events --type session --type wokeUp | jq .
              tsgateway events --type heartRate --count 5
            """)
    @Option(help: ArgumentHelp("Only this watch (address or name).", valueName: "watch"))
    var device: String?
    @Option(help: ArgumentHelp("Only events of this type (repeatable).", valueName: "type"))
    var type: [String] = []
    @Option(help: "Stop after this many events.")
    var count: Int?

    func validate() throws {
        for name in type where GatewayEvent.KindName(rawValue: name) == nil {
            throw ValidationError("unknown event type \"\(name)\"; one of \(GatewayEvent.KindName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        let client = try await DaemonConnection.require()
        defer { client.close() }
        var watchId: String?
        if let device {
            let served = try await DaemonConnection.call { try await client.watches() }
            guard let match = served.first(where: { WatchIdentity(id: $0.id, name: $0.name).isNamed(by: device) }) else {
                throw CLIFailure("tsgateway serve has no watch \"\(device)\"; it serves \(served.map(\.id).joined(separator: ", "))", status: .deviceNotFound)
            }
            watchId = match.id
        }
        let kinds = Set(type.compactMap(GatewayEvent.KindName.init(rawValue:)))
        let events = try await DaemonConnection.call { try await client.events() }
        // On stderr, so that stdout stays one JSON object a line; scripts wait for it before they act.
        FileHandle.standardError.write(Data("listening for events of tsgateway serve (Ctrl-C to stop)\n".utf8))
        var seen = 0
        do {
            for try await event in events {
                if let watchId, event.watch != watchId { continue }
                if !kinds.isEmpty, !kinds.contains(event.type) { continue }
                print(event.json())
                fflush(nil)
                seen += 1
                if let count, seen >= count { break }
            }
        } catch {
            throw CLIFailure.from(error)
        }
    }
}

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Live sleep sessions followed by `tsgateway serve`.",
        subcommands: [Status.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the current (or latest) live sleep session of a watch.",
            discussion: """
                A session opens when the wearer falls asleep, is interrupted while the link is \
                down and resumed by the next stage, closes at the wake-up, and is complete once \
                a sleep sync has stored its records. If the gateway died during it, it carries \
                an unexpected end time.
                """)
        @Option(help: ArgumentHelp("The watch (address or name; default: the daemon's only watch).", valueName: "watch"))
        var device: String?
        @Flag(help: "Print JSON: {watch, session: {id, state, startTime, endTime, unexpectedEndTime, interrupted, interruptions, fellAsleepAt, wokeUpAt, currentStage, ...} or null, stages: [{time, stage, kind}]}.")
        var json = false

        func run() async throws {
            let client = try await DaemonConnection.require()
            defer { client.close() }
            guard let remote = try await WatchAccessor.daemonWatch(client, device: device) else {
                throw CLIFailure("tsgateway serve has no watch \"\(device ?? "")\"", status: .deviceNotFound)
            }
            let report = try await DaemonConnection.call { try await remote.remote.session() }
            if json { return try JSONOutput.print(report) }
            guard let session = report.session else {
                print("\(report.watch): no live sleep session yet")
                return
            }
            let zone = TimeZone(identifier: session.timeZone) ?? .current
            func time(_ seconds: Int64?) -> String {
                guard let seconds else { return "–" }
                let formatter = DateFormatter()
                formatter.timeZone = zone
                formatter.dateFormat = "yyyy-MM-dd HH:mm"
                return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            }
            var state = session.state.rawValue
            if session.state == .open && session.interrupted { state += ", interrupted (link down)" }
            if session.interruptions > 0 { state += ", \(session.interruptions) interruption\(session.interruptions == 1 ? "" : "s")" }
            var rows = [["watch", report.watch], ["session", state], ["started", time(session.startTime)],
                        ["fell asleep", time(session.fellAsleepAt)]]
            if let stage = session.currentStage, session.state == .open { rows.append(["stage now", stage.name]) }
            rows.append(["woke up", time(session.wokeUpAt)])
            if let unexpected = session.unexpectedEndTime { rows.append(["unexpected end", time(unexpected) + " (the gateway stopped without closing it)"]) }
            rows.append(["stages", report.stages.map { "\($0.stage.name) \(time($0.time).suffix(5))" }.joined(separator: ", ")])
            print(TextTable.render(rows))
        }
    }
}

/// The running daemon, for commands that only make sense with it.
enum DaemonConnection {
    static func require() async throws -> GatewayClient {
        guard let client = await GatewayClient.ifRunning() else {
            let bus = GatewayClient.preferredBusName()
            throw CLIFailure("tsgateway serve is not running on the \(bus) bus (start it: sudo systemctl start tsgateway; "
                             + "for a development daemon on the session bus set TSGATEWAY_BUS=session)", status: .unavailable)
        }
        return client
    }

    static func call<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw CLIFailure.from(error) }
    }
}
