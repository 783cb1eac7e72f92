import ArgumentParser
import Foundation
import TSGatewayAPI
import TSModels
import TSStore

/// `tsgateway outbox status|retry`: the uploads of synced nights waiting in the database.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Inspect and retry the uploads of synced nights (the `upload:` endpoint of `tsgateway serve`).",
        discussion: """
            When the configuration has an `upload:` section, every night a sync completes is put \
            in the database's outbox in the same transaction as its records, and `tsgateway serve` \
            POSTs it to the endpoint. An event is pending until the server accepts it (2xx) or \
            already has its source id (409), then synced; a 400 marks it failed with the server's \
            reason, and `outbox retry` sends the failed ones again. Other errors are retried by \
            the daemon with backoff.

            The database is --db, else the `database:` of --config, else that of \
            /etc/tsgateway/config.yaml if it exists, else $XDG_DATA_HOME/tsgateway/tsgateway.sqlite.

            Examples:
              tsgateway outbox status
              tsgateway outbox status --config /etc/tsgateway/config.yaml --json
              tsgateway outbox retry --db /var/lib/tsgateway/tsgateway.sqlite
            """,
        subcommands: [Status.self, Retry.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how many uploads are pending, synced and failed, and why the last ones failed.",
            discussion: """
                Examples:
                  tsgateway outbox status
                  tsgateway outbox status --db ./tsgateway.sqlite --json
                """)
        @OptionGroup var options: DatabaseOptions
        @Flag(help: "Print JSON: {database, counts: {pending, synced, failed}, oldestPending, nextAttempt, lastPendingError, events: [{sourceId, watchId, status, attempts, createdAt, nextAttemptAt, syncedAt, httpStatus, backendId, lastError}]}.")
        var json = false

        struct Output: Encodable {
            var database: String
            var counts: [String: Int]
            var oldestPending: Date?
            var nextAttempt: Date?
            var lastPendingError: String?
            var events: [Event]
        }

        /// An event without its body (health data stays in the database).
        struct Event: Encodable {
            var sourceId: String
            var watchId: WatchID
            var kind: String
            var status: String
            var attempts: Int
            var createdAt: Date
            var nextAttemptAt: Date?
            var syncedAt: Date?
            var httpStatus: Int?
            var backendId: String?
            var lastError: String?
        }

        func run() async throws {
            let store = try options.openStore()
            let summary: OutboxSummary
            let events: [OutboxEvent]
            do {
                summary = try await store.outboxSummary()
                events = try await store.outboxEvents(limit: 100_000)
            } catch {
                throw CLIFailure("\(error)", status: .ioError)
            }
            if json {
                try JSONOutput.printWithDates(Output(
                    database: store.path,
                    counts: ["pending": summary.pending, "synced": summary.synced, "failed": summary.failed],
                    oldestPending: summary.oldestPending, nextAttempt: summary.nextAttempt, lastPendingError: summary.lastPendingError,
                    events: events.map {
                        Event(sourceId: $0.sourceId, watchId: $0.watchId, kind: $0.kind, status: $0.status.rawValue, attempts: $0.attempts,
                              createdAt: $0.createdAt, nextAttemptAt: $0.status == .pending ? $0.nextAttemptAt : nil, syncedAt: $0.syncedAt,
                              httpStatus: $0.httpStatus, backendId: $0.backendId, lastError: $0.lastError)
                    }))
                return
            }
            func when(_ date: Date?) -> String {
                guard let date else { return "—" }
                let seconds = Int(date.timeIntervalSinceNow.rounded())
                let relative = seconds <= 0 ? "\(Self.span(-seconds)) ago" : "in \(Self.span(seconds))"
                return "\(date.formatted(date: .abbreviated, time: .standard)) (\(relative))"
            }
            var rows = [
                ["database", store.path],
                ["pending", "\(summary.pending)"],
                ["synced", "\(summary.synced)"],
                ["failed", "\(summary.failed)"],
            ]
            if summary.pending > 0 {
                rows.append(["oldest pending", when(summary.oldestPending)])
                rows.append(["next attempt", summary.nextAttempt.map { $0 <= Date() ? "due now" : when($0) } ?? "—"])
                if let error = summary.lastPendingError { rows.append(["last error", error]) }
            }
            print(TextTable.render(rows))
            let failed = events.filter { $0.status == .failed }
            if !failed.isEmpty {
                print("\nfailed (`tsgateway outbox retry` sends them again):")
                for event in failed.suffix(20) {
                    print("  \(event.sourceId): \(event.httpStatus.map { "HTTP \($0): " } ?? "")\(event.lastError ?? "no reason recorded")")
                }
                if failed.count > 20 { print("  … and \(failed.count - 20) more (--json lists all)") }
            }
        }

        static func span(_ seconds: Int) -> String {
            switch seconds {
            case ..<60: "\(seconds) s"
            case ..<3600: "\(seconds / 60) min"
            case ..<86_400: "\(seconds / 3600) h \(seconds % 3600 / 60) min"
            default: "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the failed uploads pending again, due now (after the server or its data was fixed).",
            discussion: """
                A running `tsgateway serve` picks them up at its next look at the outbox (its \
                upload `interval`).

                Examples:
                  tsgateway outbox retry
                  tsgateway outbox retry --config /etc/tsgateway/config.yaml
                """)
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let store = try options.openStore()
            let count: Int
            do {
                count = try await store.retryFailedOutboxEvents()
            } catch {
                throw CLIFailure("\(error)", status: .ioError)
            }
            print(count == 0 ? "no failed uploads" : "\(count) failed upload\(count == 1 ? "" : "s") pending again")
        }
    }
}
