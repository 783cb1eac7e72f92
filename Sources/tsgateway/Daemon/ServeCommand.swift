import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TSGatewayService

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
            let withoutSecret = configuration.watchesWithoutTheirSecret()
            if !withoutSecret.isEmpty { throw CLIFailure("\(config): " + withoutSecret.joined(separator: "\n"), status: .config) }
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
        // A parent may hand SIGTERM down ignored (Foundation's Process passes ignored signals on);
        // then one that came before the service group's handler was lost and the daemon ran on.
        signal(SIGTERM, SIG_DFL)
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
