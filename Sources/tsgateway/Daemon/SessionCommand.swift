import ArgumentParser
import Foundation

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
            let report = try await DaemonConnection.call { try await remote.session() }
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
            var rows = [["watch", report.watch.rawValue], ["session", state], ["started", time(session.startTime)],
                        ["fell asleep", time(session.fellAsleepAt)]]
            if let stage = session.currentStage, session.state == .open { rows.append(["stage now", stage.name]) }
            rows.append(["woke up", time(session.wokeUpAt)])
            if let unexpected = session.unexpectedEndTime { rows.append(["unexpected end", time(unexpected) + " (the gateway stopped without closing it)"]) }
            rows.append(["stages", report.stages.map { "\($0.stage.name) \(time($0.time).suffix(5))" }.joined(separator: ", ")])
            print(TextTable.render(rows))
        }
    }
}
