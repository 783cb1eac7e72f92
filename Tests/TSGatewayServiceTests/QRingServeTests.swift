import Foundation
import TSModels
import TSStore
import Testing

/// `tsgateway serve` with a simulated QRing ring (`simulated: true`, `dialect: qring`).
@Suite("tsgateway serve with a QRing ring", .serialized, .timeLimit(.minutes(3)))
struct QRingServeTests {
    @Test("the daemon serves a simulated ring: info, monitors, alarms 79 and a sleep sync with heart rate through the CLI")
    func servesASimulatedRing() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: ring\ndialect: qring"])
        try await daemon.start()
        let info = try await daemon.cli(["info", "--device", "ring", "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"model\" : \"R02_5A1C\""), "\(info.stdout)")
        #expect(info.stdout.contains("\"hardwareRevision\" : \"R02_V3.0\""), "\(info.stdout)")
        let monitors = try await daemon.cli(["monitor", "get", "heart-rate", "--device", "ring", "--json"])
        #expect(monitors.status == 0, "\(monitors.stderr)")
        #expect(monitors.stdout.contains("\"intervalMinutes\" : 5"), "\(monitors.stdout)")
        let alarms = try await daemon.cli(["alarms", "get", "--device", "ring"])
        #expect(alarms.status == 79, "stdout \(alarms.stdout) stderr \(alarms.stderr)")
        // The daemon synced the ring when it connected; a sync asked for now stores nothing twice.
        let sync = try await daemon.cli(["sleep", "sync", "--since", "7d", "--device", "ring", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(report["reconnects"] as? Int == 0)
        #expect(report["heartRateFetched"] as? Int ?? 0 > 0, "\(sync.stdout)")
        let store = try GatewayStore(path: daemon.databasePath)
        #expect(try await !store.sleepRecords(watch: WatchID("00:00:5E:00:54:01")!).isEmpty, "the ring's nights are in the daemon's database")
        #expect(try await !store.heartRate(watch: WatchID("00:00:5E:00:54:01")!).isEmpty, "the ring's heart-rate log is in the daemon's database")
        await daemon.cleanUp()
    }
}
