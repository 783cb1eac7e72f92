import Foundation
import TSDevice
import TSModels
import TSQRing
import TSQRingSimulator
import TSQRingWatch
import TSStore
import Testing

/// A ring that answers every packet on its command pair twice (issue 47: answers that come twice,
/// or for an earlier request). QRing's answers carry only their command byte, so the copy of one
/// answer may meet the central's next request of the same command (the heart-rate log of the next
/// day, a setting read after a write). The central must take each answer once and end as it does
/// with a ring that answers once.
@Suite("the QRing central and a ring that answers twice")
struct QRingAnswersTwiceTests {
    struct Seen: Equatable {
        var model: String
        var battery: BatteryStatus
        var monitorAfterSet: MonitorConfig
        var stored: [SleepItem]
        var heartRateSamples: Int
        var heartRateError: String?
        var reconnects: Int
    }

    /// The journey, and how many notifications the ring sent on its command pair.
    static func journey(answersTwice: Bool) async throws -> (Seen, sent: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-qring-twice-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = SimulatedRing.Configuration()
        configuration.answersTwice = answersTwice
        let ring = SimulatedRing(configuration: configuration, history: RingHistory(seed: 42, timeZone: QRingRig.zone, now: QRingRig.now, days: 7))
        let watch = try QRingRig.central(for: ring)
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        let info = try await watch.connect()
        _ = try await watch.battery()
        let battery = try await watch.battery()
        var monitor = try await watch.monitorConfig(.heartRate)
        monitor.schedule.intervalMinutes = 10
        try await watch.setMonitorConfig(monitor)
        let after = try await watch.monitorConfig(.heartRate)
        var sync = SleepSync(watch: watch, store: store, watchId: QRingRig.watchId)
        sync.firstBackoff = .milliseconds(20)
        let report = try await sync.run(from: QRingRig.from)
        await watch.disconnect()
        let sent = await ring.statistics.notificationsSent
        return (Seen(model: info.model, battery: battery, monitorAfterSet: after, stored: try await store.sleepRecords(watch: QRingRig.watchId),
                    heartRateSamples: try await store.heartRate(watch: QRingRig.watchId).count,
                     heartRateError: report.heartRateError.map { "\($0)" }, reconnects: report.reconnects), sent)
    }

    @Test("connect, battery twice, a setting written and read, and a week's sync with its heart-rate log end as with a ring that answers once")
    func everyAnswerTwice() async throws {
        let (once, sentOnce) = try await Self.journey(answersTwice: false)
        let (twice, sentTwice) = try await Self.journey(answersTwice: true)
        #expect(sentTwice >= 2 * sentOnce - 2, "the copies went out: \(sentTwice) notifications, \(sentOnce) once")
        #expect(!once.stored.isEmpty && once.heartRateSamples > 500, "a week of nights and of the log (at the ring's interval then, 10 minutes): \(once)")
        #expect(twice == once, "twice: \(twice)\nonce: \(once)")
    }
}
