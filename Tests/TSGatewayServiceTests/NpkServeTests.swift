import Foundation
import TSModels
import TSStore
import Testing

/// `tsgateway serve` with a simulated TopStep watch (`simulated: true`, `dialect: npk`).
@Suite("tsgateway serve with an NPK watch", .serialized, .timeLimit(.minutes(3)))
struct NpkServeTests {
    @Test("the daemon serves a simulated NPK watch: info, alarms and a sleep sync through the CLI")
    func servesASimulatedNpkWatch() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: topstep\ndialect: npk"])
        try await daemon.start()
        let info = try await daemon.cli(["info", "--device", "topstep", "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"model\" : \"NPK Simulator\""), "\(info.stdout)")
        #expect(info.stdout.contains("\"labelMaxBytes\" : 63"), "\(info.stdout)")
        let alarms = try await daemon.cli(["alarms", "get", "--device", "topstep"])
        #expect(alarms.status == 0, "\(alarms.stderr)")
        #expect(alarms.stdout.contains("Work"), "\(alarms.stdout)")
        // The daemon synced the watch when it connected; a sync asked for now finds nothing new.
        let sync = try await daemon.cli(["sleep", "sync", "--since", "7d", "--device", "topstep", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(report["reconnects"] as? Int == 0)
        let store = try GatewayStore(path: daemon.databasePath)
        #expect(try await !store.sleepRecords(watch: WatchID("00:00:5E:00:54:01")!).isEmpty, "the watch's nights are in the daemon's database")
        await daemon.cleanUp()
    }
}
