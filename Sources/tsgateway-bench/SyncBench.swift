import Foundation
import TSDevice
import TSModels
import TSProtocol
import TSSimulator
import TSStore
import TSTransport

/// Syncs 7 and 90 days from the simulator into a store over a modelled BLE link and compares the
/// goodput with what the link's notifications could carry at best.
func runSyncBenchmarks() async throws {
    let mtu = try ATTMTU(247)
    let interval = Duration.milliseconds(15)
    let packetsPerEvent = 4
    let theoretical = Double(packetsPerEvent * mtu.chunkSize) / 0.015
    print("link model: MTU \(mtu.value), connection interval 15 ms, \(packetsPerEvent) packets per direction per event")
    print("theoretical notification goodput: \(formatRate(theoretical, unit: "B")) (\(packetsPerEvent) × \(mtu.chunkSize) B per event)")
    for days in [7, 90] {
        let counter = LinkCounter()
        let run = try await modelledSync(days: days, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter)
        let records = run.records, seconds = run.seconds
        let recordBytes = records.count * SleepPage.recordSize
        let wire = await counter.wireBytes - run.wireBytesBeforeSync
        let goodput = Double(recordBytes) / seconds
        // The sync's connection events: from the one that carried SLEEP_QUERY to the one that
        // brought SLEEP_COMMIT's answer (the last that carried anything).
        let log = Array(await counter.eventLog.dropFirst(run.eventsBeforeSync))
        let first = log.firstIndex { $0.up > 0 } ?? 0, last = log.lastIndex { $0.up > 0 || $0.down > 0 } ?? 0
        let used = Array(log[first...last])
        let notifications = used.reduce(0) { $0 + $1.down } - 2  // less the query's and the commit's answers
        // What protocol v1 needs at best: the query up, its answer and the notifications down,
        // SLEEP_COMMIT up once the last page is in, its answer down, each a later event.
        let atBest = 1 + (notifications + 1 + packetsPerEvent - 1) / packetsPerEvent + 1 + 1
        let fullDown = used.filter { $0.down == packetsPerEvent }.count, idle = used.filter { $0.up == 0 && $0.down == 0 }.count
        print("""
            \(days) days: \(run.fetched) records (\(recordBytes) record bytes) in \(String(format: "%.3f", seconds)) s = \
            \(String(format: "%.1f", seconds / interval.timeInterval)) connection intervals, \(formatRate(Double(records.count) / seconds, unit: " records"))
              effective goodput \(formatRate(goodput, unit: "B")): ratio to theoretical \(String(format: "%.3f", goodput / theoretical)); \
            at most \(String(format: "%.3f", Double(recordBytes) / (Double(atBest - 1) * interval.timeInterval) / theoretical)) \
            (the record bytes over the \(atBest - 1) intervals between the fewest events protocol v1 needs)
              connection events from the query to the commit's answer: \(used.count), \(used.count - 1) intervals apart \
            (at best \(atBest) for \(notifications) notifications); \
            \(fullDown) carried \(packetsPerEvent) notifications, \(idle) carried nothing
              wire bytes per record byte: \(String(format: "%.3f", Double(wire) / Double(recordBytes))) (ATT + L2CAP headers, both directions, sync incl. query and commit)
            """)
    }
}

/// Sync times at the connection intervals a central can ask for (`sleep sync` asks for 7.5–15 ms
/// during the transfer, the kernel's default is 30–50 ms), on the same modelled link: each
/// reported as a ratio to the 30 ms time measured in the same run. Packets per connection event
/// are what fits the interval on the 1M PHY with Data Length Extension (a 251-byte PDU, its
/// empty answer and two inter-frame spaces take about 2.5 ms), at most 4 (controller buffers).
func runIntervalBenchmarks() async throws {
    let mtu = try ATTMTU(247)
    let intervals: [(milliseconds: Double, packets: Int)] = [(7.5, 3), (15, 4), (30, 4)]
    print("link model: MTU \(mtu.value), 1M PHY with Data Length Extension, packets per direction per event: "
        + intervals.map { "\($0.packets) at \($0.milliseconds) ms" }.joined(separator: ", "))
    print("days  interval  records  sync time  ratio to 30 ms")
    for days in [7, 90] {
        var times: [Double: Double] = [:], counts: [Double: Int] = [:]
        for (milliseconds, packets) in intervals {
            let run = try await modelledSync(days: days, mtu: mtu, interval: .microseconds(Int(milliseconds * 1000)), packetsPerEvent: packets)
            times[milliseconds] = run.seconds
            counts[milliseconds] = run.fetched
        }
        for (milliseconds, _) in intervals {
            let seconds = times[milliseconds] ?? 0
            let baseline = times[30] ?? seconds
            print(String(format: "%4d  %6.1f ms  %7d  %7.2f s  %.2f", days, milliseconds, counts[milliseconds] ?? 0, seconds, baseline > 0 ? seconds / baseline : 0))
        }
    }
}

let benchZone = TimeZone(identifier: "Europe/Berlin") ?? .gmt
let benchNow = Date(timeIntervalSince1970: 1_762_156_800)

/// One sync of `days` from the simulator into a fresh store over the modelled link.
func modelledSync(days: Int, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter = LinkCounter()) async throws
    -> (seconds: Double, fetched: Int, records: [SleepItem], wireBytesBeforeSync: Int, eventsBeforeSync: Int) {
    let records = SleepDataGenerator(seed: 9, timeZone: benchZone).records(days: days, lastMorning: benchNow, notAfter: benchNow)
    let simulator = SimulatedWatch(state: SimulatorState(records: records))
    let transport = ModelledLinkTransport(peripheral: simulator, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter)
    var configuration = WatchConfiguration()
    configuration.window = 16
    let watch = Watch(transport: transport, configuration: configuration)
    try await watch.connect()
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-\(UUID()).sqlite").path
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try GatewayStore(path: path)
    let bytesBefore = await counter.wireBytes, eventsBefore = await counter.connectionEvents
    let start = ContinuousClock.now
    let report = try await SleepSync(watch: watch, store: store, watchId: "bench").run(from: records[0].start)
    let elapsed = ContinuousClock.now - start
    await watch.disconnect()
    guard try await store.sleepRecords(watch: "bench") == records else { throw BenchFailure("the store does not equal the simulator's records") }
    return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, report.fetched, records, bytesBefore, eventsBefore)
}
