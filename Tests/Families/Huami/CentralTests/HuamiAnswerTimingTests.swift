import Foundation
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSGATT
import TSHuami
import TSHuamiFamily
import TSHuamiSimulator
import TSHuamiWatch
import TSModels
import TSStore
import TSTransport

/// The Huami central against a simulated band whose answers come before their write's response,
/// at once after it, or late (`AnswerTiming`), or twice: pair (the connect that takes the
/// band's key), info and a sleep sync each go through, as over the loopback link of the family.
///
/// Over BlueZ, bluetoothd acknowledges a write request to a characteristic that also takes write
/// commands as it hands the write to the band (BlueZ 5.66 src/gatt-database.c, `write_setup_cb`),
/// so the write's response says nothing about when the band will answer: the central's wait for
/// an answer runs from before the band has read the request. It used to be one request timeout,
/// and a Huami request is never sent again.
@Suite("the Huami central takes the band's answers in any order and timing", .serialized, .timeLimit(.minutes(3)))
struct AnswerTimingTests {
    static let key = "00112233445566778899aabbccddeeff"
    static let watchId = WatchID("AA:BB:CC:DD:EE:47")!
    /// Short, so that the late band can be late by several of them and the test stays quick.
    static let requestTimeout: Duration = .milliseconds(400)

    struct Rig {
        var watch: HuamiWatch
        var band: SimulatedHuamiBand
        /// What the central told `WatchConfiguration.traffic` (what `-v` prints).
        var traffic: TrafficLines
    }

    final class TrafficLines: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String] = []
        func add(_ line: String) { lock.withLock { kept.append(line) } }
        var lines: [String] { lock.withLock { kept } }
    }

    /// A band answering with `timing` over the loopback link, each auth answer coming again during
    /// the next auth request when `authAnswersAgain`; the central pairs with the band's key.
    static func rig(_ timing: AnswerTiming, days: Int = 2, authAnswersAgain: Bool = false,
                    configure: (inout WatchConfiguration) -> Void = { _ in }) throws -> Rig {
        var bandConfiguration = SimulatedHuamiBand.Configuration()
        bandConfiguration.answerTiming = timing
        let history = HuamiBandHistory(seed: 47, timeZone: HuamiWatchTests.zone, now: HuamiWatchTests.now, days: days,
                                       format: bandConfiguration.sampleFormat)
        let band = SimulatedHuamiBand(configuration: bandConfiguration, history: history, now: { HuamiWatchTests.now })
        let bandLink = HuamiBandLink(band: band)
        let link: any PeripheralEndpoint & CharacteristicsEndpoint = authAnswersAgain ? AuthAnswersAgain(bandLink) : bandLink
        let transport = LoopbackTransport(peripheral: link, mtu: try ATTMTU(247), standard: band, name: bandConfiguration.name, characteristics: link)
        var configuration = WatchConfiguration()
        configuration.timeZone = HuamiWatchTests.zone
        configuration.now = { HuamiWatchTests.now }
        configuration.requestTimeout = requestTimeout
        // Between two packets of a fetch: long enough for a starved test process (500 ms cut a
        // fetch beside two TCG VMs: the flake ledger), and no part of what these tests show.
        configuration.pageIdleTimeout = .seconds(2)
        configuration.pairing = true
        configuration.pairingSecret = PairingSecret(key: "auth-key", text: key)
        let traffic = TrafficLines()
        configuration.traffic = { traffic.add($0) }
        configure(&configuration)
        return Rig(watch: HuamiWatch(transport: transport, configuration: configuration), band: band, traffic: traffic)
    }

    /// Pair (connect with the key), info, a sleep sync equal to the band's ground truth.
    func pairInfoAndSync(_ rig: Rig) async throws {
        let info = try await rig.watch.connect()
        #expect(await rig.band.statistics.authsAccepted == 1, "paired: the band took the key")
        #expect(info.model == "Mi Smart Band 5")
        #expect(info.firmware == rig.band.configuration.firmware)
        #expect(try await rig.watch.battery() == BatteryStatus(level: 71, state: .discharging))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huami-timing-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        var sync = SleepSync(watch: rig.watch, store: store, watchId: Self.watchId)
        sync.firstBackoff = .milliseconds(10)
        let report = try await sync.run(from: Int64(HuamiWatchTests.now.timeIntervalSince1970) - 2 * 86_400)
        #expect(report.reconnects == 0)
        #expect(try await store.sleepRecords(watch: Self.watchId) == rig.band.history.sleepItems, "the nights as the band holds them, each once")
        #expect(await rig.band.statistics.acknowledgements == 1)
        await rig.watch.disconnect()
    }

    /// The cause: an answer later than one request timeout after its write's response was taken
    /// for silence ("the watch did not answer the auth challenge (1 attempts)", exit 75), though
    /// the band answered every step. Before the response and at once after it are the other orders.
    @Test("pair, info and sleep sync through a band that answers before the write's response, at once after it, or later than a request timeout after it",
          arguments: [AnswerTiming.beforeResponse, .late(.zero), .late(requestTimeout * 2.5)])
    func answersLaterThanARequestTimeoutAfterTheWriteResponse(_ timing: AnswerTiming) async throws {
        let rig = try Self.rig(timing)
        try await pairInfoAndSync(rig)
        // `-v`: what was written, what arrived and where it went.
        let lines = rig.traffic.lines
        #expect(lines.contains { $0.hasPrefix("writing 82 00 02 01 00 to auth (00000009) for the auth challenge") }, "\(lines.prefix(8))")
        #expect(lines.contains { $0.hasPrefix("auth notification 10 82 01") && $0.hasSuffix("→ the auth challenge") }, "\(lines.prefix(8))")
        #expect(lines.contains("auth notification 10 83 01 → the auth answer"), "\(lines.prefix(8))")
        #expect(lines.contains { $0.hasPrefix("activity data notification") && $0.hasSuffix("→ the activity fetch (and the data packets after it)") })
    }

    /// An answer to an earlier step that comes again while the next step waits (the challenge a
    /// second time after the encrypted number was written) is no answer to that step: it is
    /// passed over, not taken for a wrong answer that fails the pairing.
    @Test("pair, info and sleep sync through a band whose auth answer comes again during the next auth request")
    func anEarlierAuthAnswerThatComesAgain() async throws {
        let rig = try Self.rig(.immediate, authAnswersAgain: true)
        try await pairInfoAndSync(rig)
        #expect(rig.traffic.lines.contains { $0.hasPrefix("auth notification 10 82 01") && $0.hasSuffix("is no answer to the auth answer: passed over") },
                "\(rig.traffic.lines.prefix(8))")
    }

    @Test("-v: a notification that comes while no exchange waits is named as dropped")
    func aNotificationNobodyWaitsForIsDropped() async throws {
        let rig = try Self.rig(.immediate)
        try await rig.watch.connect()
        // An answer nobody asked for: the band's answer to an alarm write the central did not make.
        await rig.band.centralWrote(HuamiConfigRequest.setAlarm(try HuamiAlarm(Alarm(slot: 0, hour: 7, minute: 0))).bytes, to: .configuration)
        let dropped = "configuration notification 10 02 01 arrived with no exchange waiting: dropped"
        for _ in 0..<200 where !rig.traffic.lines.contains(dropped) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(rig.traffic.lines.contains(dropped), "\(rig.traffic.lines.suffix(4))")
        #expect(await rig.watch.droppedNotifications == 1)
        await rig.watch.disconnect()
    }
}

/// The simulated band's link with each auth answer coming a second time, during the next auth
/// request: an answer to an earlier request that reaches the next exchange.
actor AuthAnswersAgain: PeripheralEndpoint, CharacteristicsEndpoint {
    let link: HuamiBandLink
    private var notify: (@Sendable (GATTCharacteristicID, [UInt8]) async -> Void)?
    private var lastAuthAnswer: [UInt8]?

    init(_ link: HuamiBandLink) { self.link = link }

    nonisolated var characteristics: Set<GATTCharacteristicID> { link.characteristics }

    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async { await link.centralConnected(mtu: mtu, send: send) }

    func centralConnected(notify: @escaping @Sendable (GATTCharacteristicID, [UInt8]) async -> Void) async {
        self.notify = notify
        await link.centralConnected { [weak self] characteristic, value in
            if characteristic == HuamiCharacteristic.auth { await self?.keep(value) }
            await notify(characteristic, value)
        }
    }

    private func keep(_ answer: [UInt8]) { lastAuthAnswer = answer }

    func centralWrote(_ chunk: [UInt8]) async { await link.centralWrote(chunk) }
    func read(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] { try await link.read(characteristic) }

    func centralWrote(_ value: [UInt8], to characteristic: GATTCharacteristicID) async throws {
        if characteristic == HuamiCharacteristic.auth, let again = lastAuthAnswer {
            lastAuthAnswer = nil
            await notify?(characteristic, again)
        }
        try await link.centralWrote(value, to: characteristic)
    }

    func centralDisconnected() async {
        notify = nil
        lastAuthAnswer = nil
        await link.centralDisconnected()
    }
}
