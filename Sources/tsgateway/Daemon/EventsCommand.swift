import ArgumentParser
import Foundation
import TSGatewayAPI
import TSModels
import TSWatchService

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
        var watchId: WatchID?
        if let device {
            let served = try await DaemonConnection.call { try await client.watches() }
            guard let match = served.first(where: { WatchIdentity(id: $0.id, name: $0.name).isNamed(by: device) }) else {
                throw CLIFailure("tsgateway serve has no watch \"\(device)\"; it serves \(served.map(\.id.rawValue).joined(separator: ", "))", status: .deviceNotFound)
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
