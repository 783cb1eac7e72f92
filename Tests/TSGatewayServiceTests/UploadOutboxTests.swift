import Foundation
import Logging
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSSleep
import TSStore
import TSTestSupport
import TSTransport
import Testing
@testable import TSGatewayAPI
@testable import TSGatewayService

private let otherWatch = WatchID("00:00:5E:00:53:0E")!
private let simulatedWatch = WatchID("00:00:5E:00:53:01")!
private let watchW = WatchID("00:00:5E:00:53:77")!

/// A scripted HTTP backend: a small Python server the test starts on 127.0.0.1 (port 0). Its
/// answers follow `script.json`, re-read on every request: `sequence` lists the statuses of
/// the next requests in order, `by_source` the statuses of the next requests for one source_id,
/// `then` the status after that, where "dedup" behaves like the sleep API (201 for a new
/// source_id, 409 for one it already stored). Every request is appended to `requests.jsonl`
/// (time, headers, body, status answered).
final class ScriptedServer: @unchecked Sendable {
    static let program = #"""
        import json, sys, threading, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

        SCRIPT, LOG = sys.argv[1], sys.argv[2]
        lock = threading.Lock()
        state = {"text": None, "index": 0, "by_source": {}, "stored": {}, "next": 1}

        def current_script():
            with open(SCRIPT) as f:
                text = f.read()
            if text != state["text"]:
                state["text"], state["index"], state["by_source"] = text, 0, {}
            return json.loads(text)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except Exception:
                    body = raw.decode("utf-8", "replace")
                source_id = body.get("source_id") if isinstance(body, dict) else None
                with lock:
                    script = current_script()
                    sequence = script.get("sequence", [])
                    own = script.get("by_source", {}).get(source_id, [])
                    used = state["by_source"].get(source_id, 0)
                    if used < len(own):
                        status = own[used]
                        state["by_source"][source_id] = used + 1
                    elif state["index"] < len(sequence):
                        status = sequence[state["index"]]
                        state["index"] += 1
                    else:
                        status = script.get("then", "dedup")
                    if status == "dedup":
                        status = 409 if source_id in state["stored"] else 201
                    if status in (200, 201) and source_id not in state["stored"]:
                        state["stored"][source_id] = "srv-%d" % state["next"]
                        state["next"] += 1
                    with open(LOG, "a") as log:
                        log.write(json.dumps({"time": time.time(), "path": self.path, "status": status,
                                              "headers": {k.lower(): v for k, v in self.headers.items()},
                                              "body": body}) + "\n")
                if status in (200, 201):
                    reply = {"success": True, "data": {"session_id": state["stored"].get(source_id)}}
                elif status == 409:
                    reply = {"success": False, "message": "a sleep session with this source_id exists"}
                elif status == 400:
                    reply = {"success": False, "message": script.get("reason", "bad request")}
                else:
                    reply = {"success": False, "error": "internal error"}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    let directory: URL
    let scriptURL: URL
    let logURL: URL
    private(set) var process: SpawnedProcess?
    private(set) var port = 0

    init(script: [String: Any]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-outbox-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        scriptURL = directory.appendingPathComponent("script.json")
        logURL = directory.appendingPathComponent("requests.jsonl")
        let programURL = directory.appendingPathComponent("server.py")
        try Data(Self.program.utf8).write(to: programURL)
        try setScript(script)
        let out = try Spawn.pipe()
        defer { close(out.read) }
        do {
            process = try Spawn.start("/usr/bin/python3", arguments: [programURL.path, scriptURL.path, logURL.path],
                                      stdin: .null, stdout: .descriptor(out.write), stderr: .inherit)
        } catch {
            close(out.write)
            throw error
        }
        close(out.write)
        var line = Data()
        var buffer = [UInt8](repeating: 0, count: 256)
        while !line.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { read(out.read, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            line.append(contentsOf: buffer[0..<count])
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            stop()
            throw ServerFailure(message: "the scripted server did not print its port")
        }
        self.port = port
    }

    struct ServerFailure: Error { var message: String }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)/api/v1/sleep")! }

    func setScript(_ script: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: script)
        try data.write(to: scriptURL, options: .atomic)
    }

    /// Every request so far, in order.
    func requests() throws -> [[String: Any]] {
        guard let text = try? String(contentsOf: logURL, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    func sourceIds() throws -> [String] {
        try requests().compactMap { ($0["body"] as? [String: Any])?["source_id"] as? String }
    }

    func stop() {
        guard let process, process.isRunning else { return }
        process.signal(SIGKILL)
        process.wait(timeout: .seconds(30))
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A simulated watch with a few generated nights, a store in a temporary file, and a sync
/// that enqueues the nights it completes.
private struct OutboxRig {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 09:00 in Berlin: the nights up to this morning are finished.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    static let watchId = simulatedWatch

    let simulator: SimulatedWatch
    let watch: Watch
    let records: [SleepItem]
    let path: String
    let store: GatewayStore

    init(days: Int = 4) throws {
        records = SleepDataGenerator(seed: 7, timeZone: Self.berlin).records(days: days, lastMorning: Self.now, notAfter: Self.now)
        simulator = SimulatedWatch(state: SimulatorState(records: records))
        var configuration = WatchConfiguration()
        configuration.timeZone = Self.berlin
        configuration.now = { OutboxRig.now }
        watch = Watch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(185)), configuration: configuration)
        path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-outbox-\(UUID()).sqlite").path
        store = try GatewayStore(path: path)
    }

    /// Six hours before the first record: every generated night is whole.
    var from: Int64 { records[0].start - 6 * 3600 }

    func sync(store: GatewayStore? = nil, from: Int64? = nil, willStore: (@Sendable ([SleepItem]) async throws -> Void)? = nil) -> SleepSync {
        var sync = SleepSync(watch: watch, store: store ?? self.store, watchId: Self.watchId)
        var policy = OutboxPolicy(timeZone: Self.berlin)
        policy.now = { OutboxRig.now }
        sync.outbox = policy
        sync.willStore = willStore
        return sync
    }

    /// The nights the outbox must hold: the engine's night segments, whole and settled an hour before "now".
    var expectedNights: [(date: LocalDate, night: SleepSegment)] {
        SleepProcessor.process(records, rule: .withNap, timeZone: Self.berlin).flatMap { day in
            day.nightSleeps.map { (day.date, $0) }
        }.filter { $0.night.summary.end + 3600 <= Int64(Self.now.timeIntervalSince1970) }
    }

    func outbox(_ settings: GatewayConfiguration.UploadSettings, store: GatewayStore? = nil, published: Published? = nil) -> UploadOutbox {
        var logger = Logger(label: "test.outbox")
        logger.logLevel = .critical
        var publish: (@Sendable (String) -> Void)?
        if let published { publish = { published.append($0) } }
        return UploadOutbox(store: store ?? self.store, settings: settings, logger: logger, publish: publish)
    }

    func cleanUp() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Runs SQL on the database from another process (python3's sqlite3), as an operator or a
    /// failing disk would: used to make a write fail at an exact point.
    func sql(_ statement: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()", path, statement]
        try process.run()
        process.waitPolling()
        #expect(process.terminationStatus == 0, "sql failed: \(statement)")
    }
}

private final class Published: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}

private func settings(_ endpoint: URL, token: String? = nil) -> GatewayConfiguration.UploadSettings {
    var settings = GatewayConfiguration.UploadSettings(endpoint: endpoint)
    settings.token = token
    settings.timeout = .seconds(5)
    settings.interval = .seconds(30)
    settings.retryMinimum = .milliseconds(50)
    settings.retryMaximum = .milliseconds(400)
    return settings
}

@Suite(.serialized) struct UploadOutboxTests {
    @Test func aSyncEnqueuesEachFinishedNightOnceAndCreatedMarksItSyncedWithTheAPIShape() async throws {
        let rig = try OutboxRig()
        defer { rig.cleanUp() }
        let expected = rig.expectedNights
        #expect(expected.count >= 3, "the generated data has nights to upload")

        let report = try await rig.sync().run(from: rig.from)
        #expect(report.enqueued == expected.count)
        let pending = try await rig.store.outboxEvents()
        #expect(pending.map(\.sourceId) == expected.map { "\(simulatedWatch.rawValue):\($0.night.summary.start)" }, "oldest first, one per night")
        #expect(pending.allSatisfy { $0.status == .pending && $0.kind == "sleepNight" && $0.attempts == 0 })

        let server = try ScriptedServer(script: ["then": 201])
        let published = Published()
        let outbox = rig.outbox(settings(server.endpoint, token: "s3cret"), published: published)
        #expect(await outbox.uploadDue() == expected.count)

        let events = try await rig.store.outboxEvents()
        #expect(events.allSatisfy { $0.status == .synced && $0.httpStatus == 201 && $0.syncedAt != nil && $0.lastError == nil })
        #expect(events.map(\.backendId) == (1...expected.count).map { "srv-\($0)" }, "the id from data.session_id")
        #expect(published.all == expected.map { "\(simulatedWatch.rawValue):\($0.night.summary.start)" })
        let summary = try await rig.store.outboxSummary()
        #expect(summary.synced == expected.count && summary.pending == 0 && summary.failed == 0 && summary.oldestPending == nil)

        let requests = try server.requests()
        #expect(requests.count == expected.count)
        for (request, (date, night)) in zip(requests, expected) {
            #expect(request["path"] as? String == "/api/v1/sleep")
            let headers = try #require(request["headers"] as? [String: String])
            let body = try #require(request["body"] as? [String: Any])
            let sourceId = "\(simulatedWatch.rawValue):\(night.summary.start)"
            #expect(headers["content-type"] == "application/json")
            #expect(headers["authorization"] == "Bearer s3cret")
            #expect(headers["idempotency-key"] == sourceId)
            #expect(Set(body.keys) == ["start_time", "end_time", "date", "time_in_bed_minutes", "total_sleep_minutes",
                                       "sleep_efficiency", "source", "source_id", "device_id", "stages"])
            #expect(body["source_id"] as? String == sourceId)
            #expect(body["source"] as? String == "tsgateway")
            #expect(body["device_id"] as? String == simulatedWatch.rawValue)
            #expect(body["date"] as? String == date.description)
            #expect(body["start_time"] as? String == rfc3339(night.summary.start))
            #expect(body["end_time"] as? String == rfc3339(night.summary.end))
            let inBed = try #require(body["time_in_bed_minutes"] as? Int)
            let asleep = try #require(body["total_sleep_minutes"] as? Int)
            #expect(inBed == Int((Double(night.summary.end - night.summary.start) / 60).rounded()))
            #expect(asleep == Int((Double(night.summary.totalSleepDuration) / 60).rounded()))
            #expect(asleep <= inBed && inBed > 120, "a night of sleep")
            let efficiency = try #require(body["sleep_efficiency"] as? Double)
            #expect(efficiency == Double(SleepEfficiency.percent(asleep: night.summary.totalSleepDuration, inBed: night.summary.end - night.summary.start)))

            let stages = try #require(body["stages"] as? [[String: Any]])
            #expect(stages.count == night.detailItems.count)
            let names: [SleepStage: String] = [.awake: "awake", .light: "core", .deep: "deep", .rem: "rem"]
            for (stage, item) in zip(stages, night.detailItems) {
                #expect(stage["stage"] as? String == names[item.stage])
                #expect(stage["start_time"] as? String == rfc3339(item.start))
                #expect(stage["end_time"] as? String == rfc3339(item.end))
                #expect(stage["duration_minutes"] as? Int == Int((Double(item.duration) / 60).rounded()))
            }
            #expect(stages.first?["start_time"] as? String == body["start_time"] as? String)
            #expect(stages.last?["end_time"] as? String == body["end_time"] as? String)
            let sleepMinutes = stages.filter { $0["stage"] as? String != "awake" }.compactMap { $0["duration_minutes"] as? Int }.reduce(0, +)
            #expect(abs(sleepMinutes - asleep) <= stages.count, "the stages add up to the total (up to rounding)")
        }
        server.stop()
    }

    @Test func conflictMeansTheServerAlreadyHasItAndCountsAsSynced() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let count = try await rig.store.outboxSummary().pending
        #expect(count > 0)
        let server = try ScriptedServer(script: ["then": 409])
        await rig.outbox(settings(server.endpoint)).uploadDue()
        let events = try await rig.store.outboxEvents()
        #expect(events.count == count)
        #expect(events.allSatisfy { $0.status == .synced && $0.httpStatus == 409 && $0.attempts == 1 })
        #expect(events.allSatisfy { $0.lastError?.contains("409") == true }, "the row notes that the server already had it")
        #expect(try server.requests().count == count)
    }

    @Test func badRequestFailsWithTheServersReasonIsNotRetriedAndOutboxRetrySendsItAgain() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let count = try await rig.store.outboxSummary().pending
        let reason = "stages[0].stage: unknown value" + String(repeating: "!", count: 600)
        let server = try ScriptedServer(script: ["then": 400, "reason": reason])
        let outbox = rig.outbox(settings(server.endpoint))
        #expect(await outbox.uploadDue() == count)

        var events = try await rig.store.outboxEvents()
        #expect(events.allSatisfy { $0.status == .failed && $0.httpStatus == 400 && $0.attempts == 1 })
        let stored = try #require(events.first?.lastError)
        #expect(stored.hasPrefix("stages[0].stage: unknown value"))
        #expect(stored.count == 500, "the reason is kept, truncated to 500 characters")
        #expect(try await rig.store.outboxSummary().failed == count)

        // Not retried: neither now nor later.
        try await Task.sleep(for: .milliseconds(150))
        #expect(await outbox.uploadDue() == 0)
        #expect(try await rig.store.dueOutboxEvents(now: Date().addingTimeInterval(86_400 * 365)).isEmpty)
        #expect(try server.requests().count == count)

        // `tsgateway outbox retry`: failed → pending, due now, attempts reset; the fixed server takes them.
        #expect(try await rig.store.retryFailedOutboxEvents() == count)
        events = try await rig.store.outboxEvents()
        #expect(events.allSatisfy { $0.status == .pending && $0.attempts == 0 && ($0.nextAttemptAt ?? .distantFuture) <= Date() })
        #expect(try await rig.store.retryFailedOutboxEvents() == 0, "nothing failed any more")
        try server.setScript(["then": "dedup"])
        #expect(await outbox.uploadDue() == count)
        #expect(try await rig.store.outboxSummary().synced == count)
        #expect(try server.requests().count == 2 * count)
    }

    @Test func serverErrorsAreRetriedWithBackoffUntilTheyPass() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let count = try await rig.store.outboxSummary().pending
        #expect(count >= 1)
        let first = try #require(try await rig.store.outboxEvents().first?.sourceId)
        // The first event's requests fail three times (the others' are answered normally in between).
        let server = try ScriptedServer(script: ["by_source": [first: [500, 503, 502]], "then": "dedup"])
        let outbox = rig.outbox(settings(server.endpoint))

        let task = Task { await outbox.run() }
        defer { task.cancel() }
        #expect(try await eventually(timeout: .seconds(15)) { try await rig.store.outboxSummary().synced == count })
        task.cancel()
        let event = try #require(try await rig.store.outboxEvent(sourceId: first))
        #expect(event.status == .synced && event.httpStatus == 201 && event.attempts == 4 && event.lastError == nil)

        // The requests for the first event: 500, 503, 502, 201, ever further apart.
        let attempts = try server.requests().filter { ($0["body"] as? [String: Any])?["source_id"] as? String == first }
        #expect(attempts.compactMap { $0["status"] as? Int } == [500, 503, 502, 201])
        let times = attempts.compactMap { $0["time"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.count == 3)
        for (gap, base) in zip(gaps, [0.05, 0.1, 0.2]) {
            #expect(gap >= base * 0.8 - 0.005, "waited at least the backoff: \(gaps)")
        }
        #expect(Set(try server.sourceIds()).count == count)
    }

    @Test func aServerErrorKeepsTheEventPendingWithTheStatusAndItsNextAttempt() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let count = try await rig.store.outboxSummary().pending
        let server = try ScriptedServer(script: ["then": 500])
        var options = settings(server.endpoint)
        options.retryMinimum = .seconds(5)
        options.retryMaximum = .seconds(60)
        let before = Date()
        #expect(await rig.outbox(options).uploadDue() == count)
        let after = Date()
        for event in try await rig.store.outboxEvents() {
            #expect(event.status == .pending && event.attempts == 1 && event.httpStatus == 500)
            #expect(event.lastError?.hasPrefix("HTTP 500") == true && event.lastError?.contains("internal error") == true, "\(event.lastError ?? "nil")")
            // Bounded by the clock before and after the attempts, however long they took.
            let next = try #require(event.nextAttemptAt)
            #expect(next >= before + 4 && next <= after + 6, "retry-min 5 s with jitter 0.8…1.2: \(next.timeIntervalSince(before)) s after the start")
        }
        #expect(try server.requests().count == count)
    }

    @Test func aRetrySetBeforeTheClockSteppedBackIsNotPutOffByTheStep() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        try await rig.store.enqueueOutboxEvents([OutboxEventDraft(sourceId: "step:1", watchId: simulatedWatch, kind: "sleepNight", payload: "{}"),
                                                 OutboxEventDraft(sourceId: "step:2", watchId: simulatedWatch, kind: "sleepNight", payload: "{}")])
        let events = try await rig.store.outboxEvents()
        let ahead = try #require(events.first { $0.sourceId == "step:1" }), near = try #require(events.first { $0.sourceId == "step:2" })
        // step:1's retry was set a minute ahead by a clock a year fast, which NTP then stepped back;
        // step:2's is a real backoff, 30 s ahead.
        try await rig.store.markOutboxRetry(id: ahead.id, httpStatus: 500, error: "HTTP 500", nextAttemptAt: Date() + 365 * 86_400 + 60)
        try await rig.store.markOutboxRetry(id: near.id, httpStatus: 500, error: "HTTP 500", nextAttemptAt: Date() + 30)
        let server = try ScriptedServer(script: ["then": 201])
        var options = settings(server.endpoint)
        options.retryMaximum = .seconds(3600)
        #expect(await rig.outbox(options).uploadDue() == 1)
        #expect(try await rig.store.outboxEvent(sourceId: "step:1")?.status == .synced)
        #expect(try await rig.store.outboxEvent(sourceId: "step:2")?.status == .pending)
    }

    @Test func backoffDoublesUpToTheMaximumWithJitter() {
        let minimum = Duration.milliseconds(50), maximum = Duration.milliseconds(400)
        let plain = (1...6).map { UploadOutbox.backoff(attempts: $0, minimum: minimum, maximum: maximum, jitter: 1) }
        #expect(plain.map { ($0 * 1000).rounded() } == [50, 100, 200, 400, 400, 400])
        for _ in 0..<200 {
            let value = UploadOutbox.backoff(attempts: 3, minimum: minimum, maximum: maximum)
            #expect(value >= 0.16 - 1e-9 && value <= 0.24 + 1e-9)
        }
        #expect(UploadOutbox.backoff(attempts: 10_000, minimum: .seconds(5), maximum: .seconds(3600), jitter: 1) == 3600)
    }

    @Test func aDeadEndpointKeepsEveryEventPendingWithAClearError() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let before = try await rig.store.outboxEvents()
        // A port that was just free: nobody listens there.
        let gone = try ScriptedServer(script: [:])
        let endpoint = gone.endpoint
        gone.stop()

        var options = settings(endpoint)
        options.retryMinimum = .seconds(5)
        options.retryMaximum = .seconds(60)
        let outbox = rig.outbox(options)
        #expect(await outbox.uploadDue() == before.count)
        #expect(await outbox.uploadDue() == 0, "not due again before the backoff")
        let after = try await rig.store.outboxEvents()
        #expect(after.count == before.count)
        for (event, original) in zip(after, before) {
            #expect(event.status == .pending && event.attempts == 1 && event.httpStatus == nil)
            #expect(event.payload == original.payload, "nothing lost")
            #expect(event.lastError?.contains("cannot connect to 127.0.0.1:\(endpoint.port!)") == true, "\(event.lastError ?? "nil")")
            let wait = try #require(event.nextAttemptAt).timeIntervalSinceNow
            #expect(wait > 3 && wait <= 6)
        }
        let summary = try await rig.store.outboxSummary()
        #expect(summary.pending == before.count && summary.lastPendingError?.contains("cannot connect") == true)
        #expect(summary.nextAttempt.map { $0 > Date() } == true)

        // An unknown host is a retry too, not a failure.
        var unknown = settings(URL(string: "http://no-such-host.invalid/api/v1/sleep")!)
        unknown.retryMinimum = .seconds(5)
        try await rig.store.enqueueOutboxEvents([OutboxEventDraft(sourceId: "dns:1", watchId: simulatedWatch, kind: "sleepNight", payload: "{}")])
        await rig.outbox(unknown).uploadDue()
        let dns = try #require(try await rig.store.outboxEvent(sourceId: "dns:1"))
        #expect(dns.status == .pending && dns.attempts == 1 && dns.lastError != nil)
    }

    @Test func theEnqueueIsAtomicWithTheCursorAndReSyncsAddNoDuplicates() async throws {
        let rig = try OutboxRig(days: 3)
        defer { rig.cleanUp() }
        let nights = rig.expectedNights.count

        // The outbox insert fails inside the final transaction: the cursor does not move either.
        try rig.sql("CREATE TRIGGER diskFull BEFORE INSERT ON uploadOutbox WHEN (SELECT count(*) FROM uploadOutbox) >= 1 BEGIN SELECT RAISE(ABORT, 'disk full'); END;")
        await #expect(throws: (any Error).self) { _ = try await rig.sync().run(from: rig.from) }
        #expect(try await rig.store.outboxEvents().isEmpty, "the first insert was rolled back with the rest")
        #expect(try await rig.store.syncCursor(watch: simulatedWatch)?.upTo == rig.records.last!.start, "the final cursor was not written")
        #expect(try await rig.store.outboxConsideredUpTo(watch: simulatedWatch) == nil)
        #expect(try await rig.store.sleepRecords(watch: simulatedWatch) == rig.records, "the records themselves are stored")
        try rig.sql("DROP TRIGGER diskFull;")

        // The next sync finishes the job: every night enqueued, once.
        let resumed = try await rig.sync().run(from: rig.from)
        #expect(resumed.enqueued == nights)
        #expect(try await rig.store.outboxSummary().pending == nights)

        // Syncing the same range again, contiguous or from scratch, enqueues nothing new.
        let again = try await rig.sync().run(from: rig.from)
        #expect(again.enqueued == 0)
        let scratch = try await rig.sync().run(from: rig.from - 86_400)
        #expect(scratch.fetched == rig.records.count && scratch.enqueued == 0)
        #expect(try await rig.store.outboxEvents().count == nights)
        #expect(Set(try await rig.store.outboxEvents().map(\.sourceId)).count == nights)
    }

    @Test func aNightsBodyCarriesTheHeartRateStoredDuringItAndOnlyThen() async throws {
        let rig = try OutboxRig(days: 3)
        defer { rig.cleanUp() }
        let nights = rig.expectedNights.map(\.night)
        #expect(nights.count >= 2)
        // Stored live while the second night was slept, before the sync that makes it final:
        // its first and last millisecond count, its end second and the second before it do not,
        // nor another watch's samples.
        let night = nights[1].summary
        func sample(_ seconds: Int64, _ bpm: Int, milliseconds: Double = 0) -> HeartRateSample {
            HeartRateSample(time: Date(timeIntervalSince1970: Double(seconds) + milliseconds / 1000), bpm: bpm)
        }
        try await rig.store.storeHeartRate([sample(night.start, 62), sample(night.start + 4_000, 51), sample(night.end - 1, 57, milliseconds: 999),
                                            sample(night.end, 130), sample(night.start - 1, 20)], watch: OutboxRig.watchId)
        try await rig.store.storeHeartRate([sample(nights[0].summary.start + 60, 80)], watch: otherWatch)

        let report = try await rig.sync().run(from: rig.from)
        #expect(report.enqueued == nights.count)
        for event in try await rig.store.outboxEvents() {
            let body = try #require(try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any])
            if event.sourceId == "\(simulatedWatch.rawValue):\(night.start)" {
                let heartRate = try #require(body["heart_rate"] as? [String: Any], "the night with samples: \(event.payload)")
                #expect(heartRate["min_bpm"] as? Int == 51)
                #expect(heartRate["max_bpm"] as? Int == 62)
                #expect(heartRate["avg_bpm"] as? Double == 56.7, "(62 + 51 + 57) / 3, one decimal")
                #expect(heartRate["sample_count"] as? Int == 3)
                #expect(Set(heartRate.keys) == ["min_bpm", "avg_bpm", "max_bpm", "sample_count"])
            } else {
                #expect(body["heart_rate"] == nil, "a night without samples of this watch has no heart_rate: \(event.payload)")
            }
        }
    }

    @Test func aCancelledSyncLeavesNoOutboxRows() async throws {
        let rig = try OutboxRig(days: 3)
        defer { rig.cleanUp() }
        // Cancelled right after the last page is stored: every record is on disk, the final write never happens.
        var sync = rig.sync()
        let total = rig.records.count
        sync.progress = { progress in
            if progress.received == total { withUnsafeCurrentTask { $0?.cancel() } }
        }
        let task = Task { [sync] in try await sync.run(from: rig.from) }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(try await rig.store.sleepRecords(watch: simulatedWatch) == rig.records)
        #expect(try await rig.store.outboxEvents().isEmpty)
        #expect(try await rig.store.outboxConsideredUpTo(watch: simulatedWatch) == nil)

        let report = try await rig.sync().run(from: rig.from)
        #expect(report.fetched <= 1, "resumed after the stored records")
        #expect(report.enqueued == rig.expectedNights.count, "the resumed sync enqueues the nights of the earlier transfer too")
    }

    @Test func nightsThatAreNotFinishedWaitForALaterSync() async throws {
        let rig = try OutboxRig(days: 3)
        defer { rig.cleanUp() }
        // A sync that ends right after the last night's last record: that night may go on.
        let lastNight = try #require(rig.expectedNights.last?.night)
        let report = try await rig.sync().run(from: rig.from, to: lastNight.summary.end)
        #expect(report.enqueued == rig.expectedNights.count - 1)
        #expect(try await rig.store.outboxEvent(sourceId: "\(simulatedWatch.rawValue):\(lastNight.summary.start)") == nil)
        // The next sync (nothing new on the watch, but later): now it is final.
        let next = try await rig.sync().run(from: rig.from)
        #expect(next.enqueued == 1)
        #expect(try await rig.store.outboxEvent(sourceId: "\(simulatedWatch.rawValue):\(lastNight.summary.start)")?.status == .pending)
    }

    @Test func noDuplicateUploadsAfterAGatewayRestart() async throws {
        let rig = try OutboxRig(days: 3)
        defer { rig.cleanUp() }
        _ = try await rig.sync().run(from: rig.from)
        let count = try await rig.store.outboxSummary().pending
        let server = try ScriptedServer(script: ["then": "dedup"])

        // The gateway dies between the server's 201 and marking the first event synced (the
        // mark's write fails, as if the process stopped there).
        try rig.sql("CREATE TRIGGER crash BEFORE UPDATE OF status ON uploadOutbox WHEN NEW.status = 'synced' BEGIN SELECT RAISE(ABORT, 'crashed'); END;")
        #expect(await rig.outbox(settings(server.endpoint)).uploadDue() == 1)
        let crashed = try #require(try await rig.store.outboxEvents().first)
        #expect(crashed.status == .pending && crashed.attempts == 0, "still pending: the POST is not known to have worked")
        #expect(try server.requests().map { $0["status"] as? Int } == [201])
        try rig.sql("DROP TRIGGER crash;")

        // A new process: new store handle, new outbox. It sends the first night again; the
        // server knows its source id (409), which counts as synced.
        let restarted = try GatewayStore(path: rig.path)
        #expect(await rig.outbox(settings(server.endpoint), store: restarted).uploadDue() == count)
        let events = try await restarted.outboxEvents()
        #expect(events.allSatisfy { $0.status == .synced })
        #expect(events.first?.httpStatus == 409 && events.dropFirst().allSatisfy { $0.httpStatus == 201 })
        let statuses = try server.requests().compactMap { $0["status"] as? Int }
        #expect(statuses.filter { $0 == 201 }.count == count, "the server stored each night exactly once")
        #expect(Set(try server.sourceIds()).count == count)

        // Another restart after everything is synced sends nothing at all.
        let third = rig.outbox(settings(server.endpoint), store: try GatewayStore(path: rig.path))
        #expect(await third.uploadDue() == 0)
        let task = Task { await third.run() }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await task.value
        #expect(try server.requests().count == count + 1)

        // A re-sync after the restart does not bring the nights back either.
        let resync = try await rig.sync(store: restarted).run(from: rig.from - 86_400)
        #expect(resync.enqueued == 0)
        #expect(try await restarted.outboxSummary().pending == 0)
    }

    @Test func theWorkerWakesForNewEventsAndStopsWhenCancelled() async throws {
        let rig = try OutboxRig(days: 2)
        defer { rig.cleanUp() }
        let server = try ScriptedServer(script: ["then": "dedup"])
        var options = settings(server.endpoint)
        options.interval = .seconds(3600)
        let outbox = rig.outbox(options)
        let task = Task { await outbox.run() }
        try await Task.sleep(for: .milliseconds(100))
        let report = try await rig.sync().run(from: rig.from)
        await outbox.wake()
        #expect(try await eventually(timeout: .seconds(5)) { try await rig.store.outboxSummary().synced == report.enqueued })
        let started = Date()
        task.cancel()
        await task.value
        #expect(Date().timeIntervalSince(started) < 2, "cancellation ends the hour-long wait at once")
    }

    @Test func outboxStoreQueries() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-outbox-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try GatewayStore(path: path)
        let drafts = (1...3).map { OutboxEventDraft(sourceId: "w:\($0)", watchId: watchW, kind: "sleepNight", payload: "{\"n\":\($0)}") }
        #expect(try await store.enqueueOutboxEvents(drafts) == 3)
        #expect(try await store.enqueueOutboxEvents(drafts) == 0, "source ids are unique")
        let due = try await store.dueOutboxEvents(limit: 2)
        #expect(due.map(\.sourceId) == ["w:1", "w:2"])
        let later = Date().addingTimeInterval(60)
        try await store.markOutboxRetry(id: due[0].id, httpStatus: 503, error: "HTTP 503", nextAttemptAt: later)
        try await store.markOutboxFailed(id: due[1].id, httpStatus: 400, reason: "bad")
        #expect(try await store.dueOutboxEvents().map(\.sourceId) == ["w:3"])
        try await store.markOutboxSynced(id: try #require(try await store.outboxEvent(sourceId: "w:3")).id, httpStatus: 201, backendId: "42")
        let summary = try await store.outboxSummary()
        #expect(summary.pending == 1 && summary.failed == 1 && summary.synced == 1 && summary.total == 3)
        #expect(summary.lastPendingError == "HTTP 503")
        #expect(abs((summary.nextAttempt ?? .distantPast).timeIntervalSince(later)) < 0.01)
        #expect(try await store.outboxEvents(status: .failed).map(\.lastError) == ["bad"])
        #expect(try await store.outboxEvent(sourceId: "w:3")?.backendId == "42")
        #expect(try await store.retryFailedOutboxEvents() == 1)
        #expect(try await store.dueOutboxEvents().map(\.sourceId) == ["w:2"])
    }

    @Test func backendIdsAndReasonsAreReadFromCommonAnswerShapes() {
        #expect(UploadOutbox.backendId(in: Data(#"{"id": 17}"#.utf8)) == "17")
        #expect(UploadOutbox.backendId(in: Data(#"{"data": {"id": "abc"}}"#.utf8)) == "abc")
        #expect(UploadOutbox.backendId(in: Data(#"{"success": true, "data": {"session_id": "u-1"}}"#.utf8)) == "u-1")
        #expect(UploadOutbox.backendId(in: Data("created".utf8)) == nil)
        #expect(UploadOutbox.reason(in: Data(#"{"message": "m"}"#.utf8)) == "m")
        #expect(UploadOutbox.reason(in: Data(#"{"error": {"message": "nested"}}"#.utf8)) == "nested")
        #expect(UploadOutbox.reason(in: Data(#"{"error": "flat"}"#.utf8)) == "flat")
        #expect(UploadOutbox.reason(in: Data("plain text\n".utf8)) == "plain text")
        #expect(UploadOutbox.reason(in: Data()) == nil)
    }
}

private func rfc3339(_ seconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}
