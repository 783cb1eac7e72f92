import Foundation
import Synchronization
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSSnoop
import TSStore
import TSTestSupport
import TSTransport
import TSWatchService

/// A capture a person makes holds a session: several commands, each on a link of its own, all on
/// the one handle the controller gives each new link. `protocol decode --to-capture` keeps each
/// connection (its open, traffic and close), and `protocol replay` plays the one the sync was made
/// in, saying which, or the one `--connection` names.
@Suite(.serialized) struct SessionCaptureTests {
    typealias D = DialectCaptureTests
    typealias R = ReplayCLITests
    static let dialects: [Dialect] = [.protocolV1, .npk, .qring]

    struct Session {
        var recorded: D.Recorded
        var records: [SleepItem]
        var fetched: Int
        /// A Huami band's auth key, which the replay is given.
        var secret: PairingSecret?

        /// The capture `protocol decode --to-capture` writes of the session's HCI traffic, packets `step` µs apart.
        func captureEntries(step: Int64 = 1250) throws -> [CaptureEntry] {
            let dialect = recorded.dialect
            let packets: [HCIPacket]
            if dialect.name == SessionCaptureTests.huami {
                let name = try #require(recorded.entries.first?.name)
                packets = try HuamiCaptureTests.packets(HuamiCaptureTests.Recorded(dialect: dialect, entries: recorded.entries, records: records,
                                                                                   secret: try #require(secret), name: name), step: step)
            } else {
                packets = try D.packets(recorded, discovery: true, step: step)
            }
            return try D.exchange(recorded, in: D.btsnoop(packets)).captureEntries.map { entry in
                var entry = entry
                if entry.direction == .open { entry.dialect = dialect.name.rawValue }
                return entry
            }
        }
    }
    static let huami = Dialect(rawValue: "huami")

    /// The battery read on a link of its own, then a sleep sync on the next, then the clock set on a third.
    static func recordSession(_ name: Dialect, in directory: URL, clock: @escaping @Sendable () -> Date = { R.now }) async throws -> Session {
        let family = try WatchFamilies.named(name)
        let link = try #require(family.simulated).open(D.threeDays(in: R.zone, until: R.now))
        let recording = RecordingTransport(recording: link.transport)
        var configuration = WatchConfiguration()
        configuration.timeZone = R.zone
        configuration.now = clock
        let secret = family.dialect.credential?.neededOnEveryConnect == true ? link.pairingSecret : nil
        configuration.pairingSecret = secret
        let store = try GatewayStore(path: directory.appendingPathComponent("live-\(name).sqlite").path)
        let central = family.dialect.makeCentral(recording, configuration)
        let operations = WatchOperations(watch: central, store: store, watchId: R.watch, policy: WatchPolicy(timeZone: R.zone))
        _ = try await operations.connect()
        _ = try await operations.battery()
        await central.disconnect()
        _ = try await operations.connect()
        let report = try await operations.syncSleep(SyncRequest(from: R.from))
        await central.disconnect()
        _ = try await operations.connect()
        try await operations.syncTime()
        await central.disconnect()
        var entries = await recording.entries()
        for index in entries.indices where entries[index].direction == .open { entries[index].dialect = name.rawValue }
        return Session(recorded: D.Recorded(dialect: family.dialect, entries: entries, records: []),
                       records: try await store.sleepRecords(watch: R.watch), fetched: report.fetched, secret: secret)
    }

    @Test(arguments: SessionCaptureTests.dialects)
    func eachConnectionOfASessionComesBackAndTheSyncsIsReplayed(dialect: Dialect) async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let session = try await Self.recordSession(dialect, in: cli.home)
        #expect(session.recorded.entries.filter { $0.direction == .open }.count == 3)
        #expect(!session.records.isEmpty)

        let exchange = try D.exchange(session.recorded, in: D.btsnoop(try D.packets(session.recorded, discovery: true)))
        #expect(exchange.connections.count == 3, "\(exchange.connections)")
        let entries = exchange.captureEntries
        #expect(entries.filter { $0.direction == .open }.count == 3)
        #expect(entries.filter { $0.direction == .disconnected }.count == 3)

        let capture = try R.write(entries.map { var entry = $0; if entry.direction == .open { entry.dialect = dialect.rawValue }; return entry }, cli, "session.jsonl")
        let db = cli.home.appendingPathComponent("replay.sqlite").path
        let replayed = try await cli.runDetached(R.replayArguments(capture, db: db, secret: nil))
        #expect(replayed.exited(0), "\(replayed.summary)")
        #expect(replayed.stderr.contains("playing connection 2 of 3 in \(capture) (the exchange that carries sleep records"), "\(replayed.stderr)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(replayed.stdout.utf8)) as? [String: Any])
        #expect(report["fetched"] as? Int == session.fetched)
        #expect(try await GatewayStore(path: db).sleepRecords(watch: R.watch) == session.records)

        // The battery's connection is not the sync's: played as asked, the central leaves it.
        let first = try await cli.runDetached(R.replayArguments(capture, db: cli.home.appendingPathComponent("first.sqlite").path, secret: nil) + ["--connection", "1"])
        #expect(first.exited(76), "\(first.summary)")
        #expect(first.stderr.contains("playing connection 1 of 3 in \(capture) (as --connection asked)"), "\(first.stderr)")
        let none = try await cli.runDetached(R.replayArguments(capture, db: cli.home.appendingPathComponent("none.sqlite").path, secret: nil) + ["--connection", "4"])
        #expect(none.exited(64) && none.stderr.contains("--connection 4: \(capture) holds 3 connections (1…3)"), "\(none.summary)")
    }

    /// The central's clock running as a person's does: a second later each time it is read (the
    /// login, the time set, each sync range), never pinned; the capture's packets a second apart,
    /// so it ran no faster than the recording. `--to-capture` of the session replays its sync
    /// without --now (the replayed central writes the clock the recorded one first wrote) into a
    /// database equal to the live one: each later clock it writes is a few seconds off the recorded one.
    @Test(arguments: SessionCaptureTests.dialects + [SessionCaptureTests.huami])
    func aSessionRecordedWithARunningClockReplaysItsSync(dialect: Dialect) async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let reads = Mutex(0)
        let session = try await Self.recordSession(dialect, in: cli.home) {
            R.now.addingTimeInterval(TimeInterval(reads.withLock { count in count += 1; return count }))
        }
        #expect(reads.withLock { $0 } >= 2, "the clock was read \(reads.withLock { $0 }) time(s)")
        #expect(session.recorded.entries.filter { $0.direction == .open }.count == 3)
        let capture = try R.write(try session.captureEntries(step: 1_000_000), cli, "running.jsonl")
        let db = cli.home.appendingPathComponent("replay.sqlite").path
        var arguments = R.replayArguments(capture, db: db, secret: session.secret)
        let now = try #require(arguments.firstIndex(of: "--now"))
        arguments.removeSubrange(now...now + 1)
        let replayed = try await cli.runDetached(arguments)
        #expect(replayed.exited(0), "\(replayed.summary)")
        #expect(replayed.stderr.contains("playing connection 2 of 3"), "\(replayed.stderr)")
        #expect(replayed.stderr.contains("the central's clock is the recorded one, "), "\(replayed.stderr)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(replayed.stdout.utf8)) as? [String: Any])
        #expect(report["fetched"] as? Int == session.fetched)
        #expect(try await GatewayStore(path: db).sleepRecords(watch: R.watch) == session.records)
    }
}
