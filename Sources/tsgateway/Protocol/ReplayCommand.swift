import ArgumentParser
import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore
import TSTransport
import TSWatchService

extension ProtocolCommand {
    /// `protocol replay`: a capture played back to the gateway's own code, which syncs from it as
    /// `sleep sync` syncs from a watch (the same watch operations), into a database of its own.
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a capture back to the gateway's own code: the sleep sync it recorded, run again into a database.",
            discussion: """
                The capture (protocol decode --btsnoop FILE --to-capture OUT, or a test's \
                recording) is played to its dialect's central, which connects and syncs sleep \
                as `sleep sync` does: every write it makes must be the one recorded, every read \
                and notification is the recorded one. What it stores goes into --db, a new \
                database (`sleep export --db`, `sleep show --db` read it), so a person's capture \
                becomes a regression test of the code that synced it. Of a capture of several \
                connections (a session: pairing, info, alarms, a sync), the one(s) whose exchange \
                carries sleep records are played, or the one --connection names; standard error \
                says which.

                The central must ask what the recorded one asked: the same range (--from and \
                --to as the recorded `sleep sync --json` printed them), the time set left out \
                where the recorded central set none (--no-time-set), and the watch's pairing \
                secret where the dialect takes one on every connect (--auth-key for huami). \
                Where it writes its own clock or the sync's range (NPK's login, time set and \
                sync range, QRing's and v1's time set, a Huami band's clock and fetch start), \
                each may be off the recorded one by as much as the recording lasted, as a \
                clock that ran while it was recorded makes them: the replayed central writes \
                the clock the recorded one first wrote, or --now. Any other write that differs \
                stops the replay (exit 76) and says where and what was recorded.

                Examples (the simulated ring's and NPK watch's syncs, in the repository):
                  tsgateway protocol replay protocol-spec/qring/captures/qring-sync.jsonl \\
                    --db ring.sqlite --from 2026-11-24T00:00:00Z --now 2026-11-27T00:00:00Z \\
                    --time-zone Europe/Berlin
                  tsgateway protocol replay protocol-spec/npk/captures/npk-sync.jsonl \\
                    --db npk.sqlite --from 2026-11-24T00:00:00Z --now 2026-11-27T00:00:00Z \\
                    --time-zone Europe/Berlin --json
                """)

        @Argument(help: ArgumentHelp("The capture to play (JSON lines).", valueName: "capture"))
        var capture: String

        @Option(help: ArgumentHelp("A new database file for what the replayed sync stores.", valueName: "path"))
        var db: String

        @Option(help: ArgumentHelp("The start of the range the recorded sync asked for (its --json \"from\"): YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS] local, or with Z or +HH:MM.", valueName: "time"))
        var from: String

        @Option(help: ArgumentHelp("The end of that range, where the recorded sync had one (its --json \"to\").", valueName: "time"))
        var to: String?

        @Option(help: ArgumentHelp("The clock the recorded central had (default: the first it wrote in the capture, where the dialect says which bytes hold it; else this machine's): each write that carries the time is made with it.", valueName: "time"))
        var now: String?

        @Option(help: ArgumentHelp("The time zone the recorded central wrote the clock in and computed nights in (default: this machine's), e.g. Europe/Berlin.", valueName: "zone"))
        var timeZone: String?

        @Flag(help: "The recorded central did not set the watch's clock at connect (its clock was not trusted).")
        var noTimeSet = false

        @Option(help: ArgumentHelp("The dialect of the capture (\(DialectChoice.list)); default: the one its first connection names.", valueName: "dialect"),
                transform: DialectChoice.parse)
        var dialect: Dialect?

        @Option(help: ArgumentHelp("The watch's address to store the records under.", valueName: "address"), transform: WatchAddressArgument.parse)
        var device: WatchID = Self.replayedWatch

        @Option(help: ArgumentHelp("The band's auth key the recorded central used (32 hex digits; --dialect huami). Never printed.", valueName: "hex"))
        var authKey: String?

        @Option(help: ArgumentHelp("Play this connection of the capture (1 for its first; default: the one(s) whose exchange carries sleep records, said on standard error).", valueName: "n"))
        var connection: Int?

        @Flag(help: "Print the sync's result as JSON, the shape of `sleep sync --json`.")
        var json = false

        @Flag(name: [.short, .long], help: "Log the replayed sync to standard error, as `sleep sync -v` does (-vv for protocol frames).")
        var verbose: Int

        /// Where a replay's records are stored by default: an address of the documentation range (RFC 7042).
        static let replayedWatch = WatchID("00:00:5E:00:53:02")!

        func validate() throws {
            if FileManager.default.fileExists(atPath: db) {
                throw ValidationError("--db \(db) exists; a replay stores into a new database, so what it holds is what the capture gave (remove it or name another)")
            }
        }

        func run() async throws {
            let entries = try readCapture()
            let chosen = try chooseDialect(entries)
            let zone = try SleepAnalyzeCommand.parseTimeZone(timeZone)
            var calendar = Calendar.current
            calendar.timeZone = zone
            let start = try DateArgument.instant(from, flag: "--from", calendar: calendar)
            let end = try to.map { try DateArgument.instant($0, flag: "--to", dayEnd: true, calendar: calendar) }
            if let end, end <= start { throw CLIFailure("--to \(to ?? "") is not after --from \(from)", status: .usage) }
            let played = try chooseConnections(entries, dialect: chosen)
            let clock = try now.map { try DateArgument.instant($0, flag: "--now", calendar: calendar) } ?? recordedClock(played, dialect: chosen, zone: zone)
            var configuration = WatchConfiguration()
            configuration.timeZone = zone
            configuration.syncTimeOnConnect = !noTimeSet
            if let clock { configuration.now = { clock } }
            configuration.pairingSecret = try secret(for: chosen)
            let logger = Logging.logger("tsgateway", verbose: verbose, quiet: .warning)
            configuration.traffic = Logging.traffic(to: logger)
            let store: GatewayStore
            do { store = try GatewayStore(path: db) } catch { throw CLIFailure("\(error) (choose another file with --db PATH)", status: .ioError) }
            let central = WatchOpener.open(.replay(played), dialect: chosen, configuration: configuration).central
            let operations = WatchOperations(watch: central, store: store, watchId: device, policy: WatchPolicy(timeZone: zone), logger: logger)
            let report: SleepSyncReport
            do {
                try await operations.connect()
                report = try await operations.syncSleep(SyncRequest(from: Int64(start.timeIntervalSince1970), to: end.map { Int64($0.timeIntervalSince1970) }))
                await central.disconnect()
            } catch {
                await central.disconnect()
                throw departed(error)
            }
            if json {
                try JSONOutput.printWithDates(SleepSyncCommand.Output(watch: device, from: start, to: end, result: report))
            } else {
                print("replayed \(capture) to the \(chosen.name) central: \(report.fetched) record\(report.fetched == 1 ? "" : "s") synced (\(report.stored) stored in \(db))"
                    + (report.heartRateFetched > 0 ? ", \(report.heartRateFetched) heart-rate sample\(report.heartRateFetched == 1 ? "" : "s")" : ""))
            }
        }

        func readCapture() throws -> [CaptureEntry] {
            let entries: [CaptureEntry]
            do {
                entries = try CaptureFile.read(from: URL(fileURLWithPath: capture))
            } catch let error as TransportError {
                throw CLIFailure("\(capture): \(error)", status: .dataError)
            } catch {
                throw CLIFailure("cannot read \(capture): \(error.localizedDescription)", status: .noInput)
            }
            guard entries.contains(where: { $0.direction == .open }) else {
                throw CLIFailure("\(capture) holds no connection (no \"open\" entry) to replay; write one with protocol decode --btsnoop FILE --to-capture OUT", status: .dataError)
            }
            return entries
        }

        func chooseDialect(_ entries: [CaptureEntry]) throws -> WatchDialect {
            let named = entries.first { $0.direction == .open }?.dialect.map(Dialect.init(rawValue:))
            if let dialect, let named, dialect != named {
                throw CLIFailure("\(capture) holds the \(named) dialect's exchange, not \(dialect)'s; run it again with --dialect \(named), or without --dialect", status: .usage)
            }
            guard let name = dialect ?? named else {
                throw CLIFailure("\(capture) does not name its dialect (a capture written before protocol decode named it); give --dialect (\(DialectChoice.list))", status: .usage)
            }
            do { return try WatchFamilies.dialect(named: name) } catch { throw CLIFailure("\(capture): \(error)", status: .dataError) }
        }

        /// The connection --connection names, else those from the first to the last whose exchange
        /// carries sleep records (a sync whose link dropped goes on in the next), else the only one;
        /// which, said on standard error.
        func chooseConnections(_ entries: [CaptureEntry], dialect: WatchDialect) throws -> [CaptureEntry] {
            let connections = CapturedConnections.split(entries)
            let count = connections.count
            let chosen: ClosedRange<Int>
            let reason: String
            if let connection {
                guard (1...count).contains(connection) else {
                    throw CLIFailure("--connection \(connection): \(capture) holds \(count) connection\(count == 1 ? "" : "s") (1…\(count))", status: .usage)
                }
                (chosen, reason) = (connection - 1...connection - 1, "as --connection asked")
            } else {
                let syncing = dialect.captureDecoder.map { decoder in
                    connections.indices.filter { !CapturedConnections.sleepItems(in: connections[$0], decoder: decoder).isEmpty }
                } ?? []
                if let first = syncing.first, let last = syncing.last {
                    (chosen, reason) = (first...last, "the exchange that carries sleep records; --connection N plays another")
                } else if count == 1 {
                    (chosen, reason) = (0...0, "the only one")
                } else {
                    throw CLIFailure("\(capture) holds \(count) connections and none carries sleep records; name the one the sync was made in with --connection N (1…\(count))",
                                     status: .usage)
                }
            }
            let which = chosen.count == 1 ? "connection \(chosen.lowerBound + 1)" : "connections \(chosen.lowerBound + 1)–\(chosen.upperBound + 1)"
            FileHandle.standardError.write(Data("tsgateway: playing \(which) of \(count) in \(capture) (\(reason))\n".utf8))
            return connections[chosen].flatMap { $0 }
        }

        /// The clock the recorded central first wrote (its login, its time set), which the replayed
        /// one writes throughout (said on standard error); nil where the dialect says of none.
        func recordedClock(_ played: [CaptureEntry], dialect: WatchDialect, zone: TimeZone) -> Date? {
            guard let reader = dialect.centralTimes else { return nil }
            for entry in played where entry.direction == .write && entry.characteristic == nil {
                guard let field = reader.centralTimes(in: entry.bytes, channel: entry.pair)?.fields.first(where: { $0.kind != .rangeStart }) else { continue }
                var instant = Date(timeIntervalSince1970: TimeInterval(field.time))
                if field.kind == .wallClock { instant = instant.addingTimeInterval(-TimeInterval(zone.secondsFromGMT(for: instant))) }
                FileHandle.standardError.write(Data("tsgateway: the central's clock is the recorded one, \(ISO8601DateFormatter().string(from: instant)) (--now gives another)\n".utf8))
                return instant
            }
            return nil
        }

        /// The secret the dialect takes on every connect, checked by its rule; none for a dialect that takes none.
        func secret(for dialect: WatchDialect) throws -> PairingSecret? {
            guard let credential = dialect.credential, credential.neededOnEveryConnect else {
                if authKey != nil { throw CLIFailure("--auth-key: the \(dialect.name) dialect takes no auth key; leave it out", status: .usage) }
                return nil
            }
            guard let authKey else {
                throw CLIFailure("the \(dialect.name) central needs the \(credential.key) its recorded central used; give --\(credential.key)", status: .usage)
            }
            switch credential.secret(authKey) {
            case let .success(secret): return secret
            case let .failure(error): throw CLIFailure("--\(credential.key): \(error.problem)", status: .usage)
            }
        }

        /// A replay that failed: a central that asked other than the recorded one, most often; what to give so it asks the same.
        func departed(_ error: any Error) -> CLIFailure {
            let failure = CLIFailure.from(error)
            return CLIFailure("the replay of \(capture) stopped: \(failure.message); a capture replays to the requests it recorded: give the recorded sync's range (--from, --to), clock (--now) and time-set choice (--no-time-set)", status: failure.status)
        }
    }
}
