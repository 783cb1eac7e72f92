import Foundation
import TSTestSupport
import Testing

/// The CLI with the simulated TopStep watch speaking NPK (`--simulate --dialect npk`).
@Suite struct NpkCLITests {
    @Test func infoDescribesTheSimulatedNpkWatch() throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let info = try #require(try cli.json(["info", "--json", "--simulate", "--dialect", "npk"]) as? [String: Any])
        #expect(info["dialect"] as? String == "npk")
        #expect(info["model"] as? String == "NPK Simulator")
        #expect(info["firmware"] as? String == "1.0.0-sim")
        #expect((info["capabilities"] as? [String: Any])?["maxAlarms"] as? Int == 8)
        #expect((info["battery"] as? [String: Any])?["level"] as? Int == 76)
    }

    @Test func alarmsGetListsTheWatchsAlarmWithoutSnooze() throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try cli.run(["alarms", "get", "--simulate", "--dialect", "npk"])
        #expect(result.status == 0, "stderr \(result.stderr)")
        #expect(result.stdout.contains("06:45"))
        #expect(result.stdout.contains("Work"))
    }
}
