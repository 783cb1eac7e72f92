import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSGATT
import TSGarmin
import TSGarminSimulator
import TSGarminWatch
import TSHuami
import TSHuamiFamily
import TSHuamiSimulator
import TSHuamiWatch
import TSModels
import TSNpk
import TSNpkSimulator
import TSNpkWatch
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSStore
import TSTransport

/// Syncs 7 and 90 days from the simulated watch into a store over a modelled BLE link, in protocol
/// v1, in TopStep's NPK dialect and from a simulated Huami band (the same nights), and compares the
/// goodput with what the link's notifications could carry at best. Record bytes are v1's 7-byte
/// records in every row, so the figures compare; each dialect's own encoding of them (NPK's
/// protobuf, Huami's sample a minute) is in its wire bytes.
func runSyncBenchmarks() async throws {
    let mtu = try ATTMTU(247)
    let interval = Duration.milliseconds(15)
    let packetsPerEvent = 4
    let theoretical = Double(packetsPerEvent * mtu.chunkSize) / 0.015
    print("link model: MTU \(mtu.value), connection interval 15 ms, \(packetsPerEvent) packets per direction per event")
    print("theoretical notification goodput: \(formatRate(theoretical, unit: "B")) (\(packetsPerEvent) × \(mtu.chunkSize) B per event)")
    print("record bytes: \(SleepPage.recordSize) per record (protocol v1's record) in every row")
    for days in [7, 90] {
        for dialect in [SyncBenchDialect.protocolV1, .npk, .npkWithHeartRate, .huami, .garmin] {
            let counter = LinkCounter()
            let run = try await modelledSync(days: days, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter, dialect: dialect)
            let records = run.records, seconds = run.seconds
            let recordBytes = records.count * SleepPage.recordSize
            let wire = await counter.wireBytes - run.wireBytesBeforeSync
            let goodput = Double(recordBytes) / seconds
            // The sync's connection events: from the one that carried the first request (SLEEP_QUERY,
            // NPK's sync start) to the last that carried anything (v1: SLEEP_COMMIT's answer; NPK,
            // which takes no acknowledgement: the end of sync).
            let log = Array(await counter.eventLog.dropFirst(run.eventsBeforeSync))
            let first = log.firstIndex { $0.up > 0 } ?? 0, last = log.lastIndex { $0.up > 0 || $0.down > 0 } ?? 0
            let used = Array(log[first...last])
            let down = used.reduce(0) { $0 + $1.down }
            // The fewest events each needs: v1 the query up, its answer and the pages down (4 per
            // event), SLEEP_COMMIT up, its answer down; NPK per sync type the start up, then its
            // answer, the list frames and the end down.
            let atBest = switch dialect {
            case .protocolV1: 1 + (down - 1 + packetsPerEvent - 1) / packetsPerEvent + 1 + 1
            case .npk: 1 + (down + packetsPerEvent - 1) / packetsPerEvent
            case .npkWithHeartRate: 2 + (run.heartRateDown + packetsPerEvent - 1) / packetsPerEvent
                + (down - run.heartRateDown + packetsPerEvent - 1) / packetsPerEvent
            case .huami: run.huami?.fewestEvents(packetsPerEvent: packetsPerEvent) ?? 0
            case .garmin: run.garmin?.fewestEvents ?? 0
            }
            let fullDown = used.filter { $0.down == packetsPerEvent }.count, idle = used.filter { $0.up == 0 && $0.down == 0 }.count
            let heartRate = dialect.carriesHeartRate ? " and \(run.heartRateFetched) heart-rate samples" : ""
            print("""
                \(days) days, \(dialect.rawValue): \(run.fetched) records (\(recordBytes) record bytes)\(heartRate) in \(String(format: "%.3f", seconds)) s = \
                \(String(format: "%.1f", seconds / interval.timeInterval)) connection intervals, \(formatRate(Double(records.count) / seconds, unit: " records"))
                  effective goodput \(formatRate(goodput, unit: "B")): ratio to theoretical \(String(format: "%.3f", goodput / theoretical)); \
                at most \(String(format: "%.3f", Double(recordBytes) / (Double(atBest - 1) * interval.timeInterval) / theoretical)) \
                (the record bytes over the \(atBest - 1) intervals between the fewest events it needs)
                  connection events from the first request to the last answer: \(used.count), \(used.count - 1) intervals apart \
                (at best \(atBest) for \(down) notifications); \
                \(fullDown) carried \(packetsPerEvent) notifications, \(idle) carried nothing
                  wire bytes per record byte: \(String(format: "%.3f", Double(wire) / Double(recordBytes))) (ATT + L2CAP headers, both directions, the whole sync\(dialect.carriesHeartRate ? ", heart rate included" : ""))
                """)
            if let garmin = run.garmin {
                print("""
                      Garmin's files: \(garmin.downloads) downloads (the directory and the FIT files), \(garmin.chunks) chunks of up to \(garmin.chunkSize) data bytes \
                    (one notification each, each answered before the next), \(garmin.archived) files archived after the commit; \
                    FIT bytes \(garmin.fileBytes) = \(String(format: "%.2f", Double(garmin.fileBytes) / Double(recordBytes))) per record byte (heart rate included)
                    """)
            }
            if let huami = run.huami {
                let sampleRate = Double(huami.sampleBytes) / seconds
                let filled = huami.filledToMTU(mtu)
                let filledBest = filled.fewestEvents(packetsPerEvent: packetsPerEvent)
                print("""
                      Huami's transfer: \(huami.transfers.count) transfers of up to \(huami.maxMinutesPerTransfer) minutes, \(huami.sampleBytes) sample bytes \
                    (\(huami.sampleSize) a minute) in \(huami.dataPackets) notifications of a counter byte + \(huami.dataBytesPerPacket) data bytes; \
                    sample goodput \(formatRate(sampleRate, unit: "B")) = \(String(format: "%.3f", sampleRate / theoretical)) of theoretical, \
                    at most \(String(format: "%.3f", Double(huami.dataBytesPerPacket) / Double(mtu.chunkSize))) (\(huami.dataBytesPerPacket) of \(mtu.chunkSize) bytes a notification)
                      the format filled to the MTU (a counter + \(filled.dataBytesPerPacket) data bytes a notification, which no source shows a band sending): \
                    at best \(filledBest) events for \(filled.dataPackets) data notifications, record goodput at most \
                    \(String(format: "%.3f", Double(recordBytes) / (Double(filledBest - 1) * interval.timeInterval) / theoretical)) of theoretical
                    """)
            }
        }
    }
}

/// What the sync bench runs: protocol v1's simulator, or the simulated NPK watch without and
/// with its heart-rate history (sync type 1 for the same range before the sleep records).
enum SyncBenchDialect: String {
    case protocolV1 = "protocol v1"
    case npk = "NPK"
    case npkWithHeartRate = "NPK with heart rate"
    /// A simulated Mi Band 5 (8-byte samples, the heart rate of each minute in them).
    case huami = "Huami"

    /// The simulated Garmin watch: its sleep and monitoring FIT files downloaded chunk by chunk.
    case garmin = "Garmin"

    var carriesHeartRate: Bool { self == .npkWithHeartRate || self == .huami || self == .garmin }
}

/// The activity fetch's shape for the fewest connection events a Huami sync needs
/// (protocol-spec/huami/huami.md §7.1): the clock read (request up, response down); per transfer the
/// start `01` up, its write response and the start answer down, `02` up, its write response, the
/// data notifications and the end `10 02 01` down, 4 a event; then `03` up, its write response and
/// `10 03 01` down. The band answers a packet at the next event at the earliest, and the central
/// sends a request only once the answer it depends on has come, so no two of those steps share an event.
struct HuamiTransferShape {
    /// Minutes of each transfer.
    var transfers: [Int]
    var maxMinutesPerTransfer: Int
    var sampleSize: Int
    var dataBytesPerPacket: Int

    init(minutes: Int, maxMinutesPerTransfer: Int, sampleSize: Int, dataBytesPerPacket: Int) {
        var left = minutes, transfers: [Int] = []
        while left > 0 {
            transfers.append(min(left, maxMinutesPerTransfer))
            left -= maxMinutesPerTransfer
        }
        self.transfers = transfers
        self.maxMinutesPerTransfer = maxMinutesPerTransfer
        self.sampleSize = sampleSize
        self.dataBytesPerPacket = dataBytesPerPacket
    }

    var sampleBytes: Int { transfers.reduce(0) { $0 + $1 * sampleSize } }
    func packets(_ minutes: Int) -> Int { (minutes * sampleSize + dataBytesPerPacket - 1) / dataBytesPerPacket }
    var dataPackets: Int { transfers.reduce(0) { $0 + packets($1) } }

    func fewestEvents(packetsPerEvent: Int) -> Int {
        let perTransfer = transfers.reduce(0) { $0 + 3 + (packets($1) + 2 + packetsPerEvent - 1) / packetsPerEvent }
        return 2 + perTransfer + 2
    }

    /// The same transfers with every notification filled to the MTU: a counter byte and MTU − 4 data bytes.
    func filledToMTU(_ mtu: ATTMTU) -> HuamiTransferShape {
        var filled = self
        filled.dataBytesPerPacket = mtu.chunkSize - 1
        return filled
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

/// One sync of `days` from the simulated watch into a fresh store over the modelled link.
func modelledSync(days: Int, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter = LinkCounter(),
                  dialect: SyncBenchDialect = .protocolV1) async throws -> ModelledSyncRun {
    if dialect == .huami { return try await modelledHuamiSync(days: days, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter) }
    if dialect == .garmin { return try await modelledGarminSync(days: days, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter) }
    let records = SleepDataGenerator(seed: 9, timeZone: benchZone).records(days: days, lastMorning: benchNow, notAfter: benchNow)
    var configuration = WatchConfiguration()
    configuration.window = 16
    configuration.timeZone = benchZone
    configuration.now = { benchNow }
    let watch: any WatchCentral
    var heartRate: [HeartRateSample] = []
    switch dialect {
    case .protocolV1:
        let simulator = SimulatedWatch(state: SimulatorState(records: records))
        watch = Watch(transport: ModelledLinkTransport(peripheral: simulator, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter),
                      configuration: configuration)
    case .huami, .garmin:
        throw BenchFailure("unreachable: a \(dialect.rawValue) sync runs in its own function")
    case .npk, .npkWithHeartRate:
        var watchConfiguration = SimulatedNpkWatch.Configuration()
        watchConfiguration.timeZone = benchZone
        if dialect == .npk {
            watchConfiguration.abilities = [.bloodPressure, .spo2, .stress]
        } else {
            let now = Int64(benchNow.timeIntervalSince1970)
            heartRate = HeartRateHistoryGenerator(seed: 9).samples(start: records[0].start, end: now, records: records)
        }
        let simulator = SimulatedNpkWatch(configuration: watchConfiguration, records: records, heartRate: heartRate)
        watch = NpkWatch(transport: ModelledLinkTransport(peripheral: simulator, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter),
                         configuration: configuration)
    }
    try await watch.connect()
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-\(UUID()).sqlite").path
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try GatewayStore(path: path)
    let bytesBefore = await counter.wireBytes, eventsBefore = await counter.connectionEvents
    let start = ContinuousClock.now
    // The heart-rate history comes first (SleepSync); the notifications up to its end are its.
    let report = try await SleepSync(watch: watch, store: store, watchId: benchWatch).run(from: records[0].start)
    let elapsed = ContinuousClock.now - start
    let heartRateDown = dialect == .npkWithHeartRate ? await counter.downBetweenFirstTwoWrites(from: eventsBefore) : 0
    await watch.disconnect()
    guard try await store.sleepRecords(watch: benchWatch) == records else { throw BenchFailure("the store does not equal the simulator's records") }
    guard try await store.heartRate(watch: benchWatch) == heartRate else { throw BenchFailure("the store does not equal the simulator's heart rate") }
    return ModelledSyncRun(seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, fetched: report.fetched,
                           records: records, wireBytesBeforeSync: bytesBefore, eventsBeforeSync: eventsBefore,
                           heartRateFetched: report.heartRateFetched, heartRateDown: heartRateDown)
}

struct ModelledSyncRun {
    var seconds: Double
    var fetched: Int
    var records: [SleepItem]
    var wireBytesBeforeSync: Int
    var eventsBeforeSync: Int
    var heartRateFetched = 0
    /// Notifications of the heart-rate sync: down to the event that carried the sleep sync's start.
    var heartRateDown = 0
    /// A Huami sync's transfers as the band sent them.
    var huami: HuamiTransferShape?
    /// A Garmin sync's downloads as the watch sent them.
    var garmin: GarminTransferShape?
}

/// A Garmin sync's shape for the fewest connection events it needs (protocol-spec/garmin/garmin.md
/// §8): the watch sends a chunk only once the one before is answered, so each chunk takes an
/// event of its own at best (down, and its answer up in the same event); per download one more
/// for the request, per archived file one for SET_FILE_FLAG and its answer.
struct GarminTransferShape {
    var downloads: Int
    var chunks: Int
    var chunkSize: Int
    var archived: Int
    var fileBytes: Int

    var fewestEvents: Int { downloads + chunks + archived }
}

/// One sync of `days` from the simulated Garmin watch (the same seed's nights in its FIT files)
/// into a fresh store over the modelled link, through `GarminWatch` and `SleepSync`: the
/// monitoring files' heart rate, the sleep files' stages, every file archived after the commit.
func modelledGarminSync(days: Int, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter) async throws -> ModelledSyncRun {
    let history = try GarminWatchHistory(seed: 9, timeZone: benchZone, now: benchNow, days: days)
    let simulated = SimulatedGarminWatch(history: history)
    var configuration = WatchConfiguration()
    configuration.timeZone = benchZone
    configuration.now = { benchNow }
    let watch = GarminWatch(transport: ModelledLinkTransport(peripheral: simulated, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter),
                            configuration: configuration)
    try await watch.connect()
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-\(UUID()).sqlite").path
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try GatewayStore(path: path)
    let bytesBefore = await counter.wireBytes, eventsBefore = await counter.connectionEvents
    let before = await simulated.statistics
    let from = Int64(benchNow.timeIntervalSince1970) - Int64(days) * 86_400
    let start = ContinuousClock.now
    let report = try await SleepSync(watch: watch, store: store, watchId: benchWatch).run(from: from)
    let elapsed = ContinuousClock.now - start
    await watch.disconnect()
    let truth = history.sleepItems.filter { $0.start >= from }
    guard try await store.sleepRecords(watch: benchWatch) == truth else { throw BenchFailure("the store does not equal the Garmin watch's ground truth") }
    let heartRate = history.heartRates.filter { Int64($0.time.timeIntervalSince1970) >= from }
    guard try await store.heartRate(watch: benchWatch) == heartRate else { throw BenchFailure("the store does not equal the Garmin watch's heart rate") }
    let after = await simulated.statistics
    let archived = await simulated.archived.count
    let shape = GarminTransferShape(downloads: after.downloads - before.downloads, chunks: after.chunksSent - before.chunksSent,
                                    chunkSize: await simulated.chunkSize, archived: archived,
                                    fileBytes: history.files.values.reduce(0) { $0 + $1.count } + history.directoryFile.count)
    return ModelledSyncRun(seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, fetched: report.fetched,
                           records: truth, wireBytesBeforeSync: bytesBefore, eventsBeforeSync: eventsBefore,
                           heartRateFetched: report.heartRateFetched, garmin: shape)
}

/// One sync of `days` from a simulated Huami band (a Mi Band 5, the same seed's nights) into a fresh
/// store over the modelled link, through the real central (`HuamiWatch`) and `SleepSync` as
/// `sleep sync` runs them: the samples' heart rate first, then the sleep read from the same
/// transfers, then the acknowledgement after the commit.
func modelledHuamiSync(days: Int, mtu: ATTMTU, interval: Duration, packetsPerEvent: Int, counter: LinkCounter) async throws -> ModelledSyncRun {
    let bandConfiguration = SimulatedHuamiBand.Configuration(model: .miBand5)
    let history = HuamiBandHistory(seed: 9, timeZone: benchZone, now: benchNow, days: days, format: bandConfiguration.sampleFormat)
    let opened = Date()
    let band = SimulatedHuamiBand(configuration: bandConfiguration, history: history,
                                  now: { benchNow.addingTimeInterval(Date().timeIntervalSince(opened)) })
    let link = HuamiBandLink(band: band)
    var configuration = WatchConfiguration()
    configuration.timeZone = benchZone
    configuration.now = { benchNow }
    configuration.pairingSecret = PairingSecret(key: PairingCredential.huamiAuthKey.key,
                                                text: bandConfiguration.authKey.bytes.map { String(format: "%02x", $0) }.joined())
    let watch = HuamiWatch(transport: ModelledLinkTransport(peripheral: link, mtu: mtu, interval: interval, packetsPerEvent: packetsPerEvent, counter: counter,
                                                            characteristics: link, standard: band, name: bandConfiguration.name),
                           configuration: configuration)
    try await watch.connect()
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-\(UUID()).sqlite").path
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try GatewayStore(path: path)
    let bytesBefore = await counter.wireBytes, eventsBefore = await counter.connectionEvents
    let start = ContinuousClock.now
    let report = try await SleepSync(watch: watch, store: store, watchId: benchWatch).run(from: history.start)
    let elapsed = ContinuousClock.now - start
    await watch.disconnect()
    let truth = history.sleepItems
    guard try await store.sleepRecords(watch: benchWatch) == truth else { throw BenchFailure("the store does not equal the band's ground truth") }
    guard try await store.heartRate(watch: benchWatch) == history.heartRates else { throw BenchFailure("the store does not equal the band's heart rate") }
    let shape = HuamiTransferShape(minutes: history.minutes, maxMinutesPerTransfer: bandConfiguration.maxMinutesPerFetch,
                                   sampleSize: bandConfiguration.sampleFormat.size, dataBytesPerPacket: bandConfiguration.dataBytesPerPacket)
    let statistics = await band.statistics
    guard statistics.transfers == shape.transfers.count, statistics.dataPacketsSent == shape.dataPackets, statistics.acknowledgements == 1 else {
        throw BenchFailure("the band sent \(statistics.transfers) transfers, \(statistics.dataPacketsSent) data packets, \(statistics.acknowledgements) acknowledgements; "
            + "expected \(shape.transfers.count), \(shape.dataPackets), 1")
    }
    return ModelledSyncRun(seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, fetched: report.fetched,
                           records: truth, wireBytesBeforeSync: bytesBefore, eventsBeforeSync: eventsBefore,
                           heartRateFetched: report.heartRateFetched, huami: shape)
}

/// The watch a modelled sync stores under.
private let benchWatch = WatchID("00:00:5E:00:53:01")!
