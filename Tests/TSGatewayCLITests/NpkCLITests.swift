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

    @Test func simulateTellsABadNpkFaultOrOptionBeforeTouchingBluetooth() throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let bogus = try cli.run(["simulate", "--adapter", "hci1", "--dialect", "npk", "--sleep-fault", "melt-day:3"])
        #expect(bogus.status == 64)
        #expect(bogus.stderr.contains("\"melt-day\" is not a fault; use corrupt-day, drop-day, swap-days or lose-link-after-days"), "stderr \(bogus.stderr)")
        let noCount = try cli.run(["simulate", "--adapter", "hci1", "--dialect", "npk", "--sleep-fault", "corrupt-day"])
        #expect(noCount.status == 64)
        #expect(noCount.stderr.contains("KIND:N"), "stderr \(noCount.stderr)")
        let v1Option = try cli.run(["simulate", "--adapter", "hci1", "--dialect", "npk", "--live-stage-interval", "5"])
        #expect(v1Option.status == 64)
        #expect(v1Option.stderr.contains("are for protocol v1"), "stderr \(v1Option.stderr)")
        let npkOption = try cli.run(["simulate", "--adapter", "hci1", "--sleep-fault", "drop-day:1"])
        #expect(npkOption.status == 64)
        #expect(npkOption.stderr.contains("are for --dialect npk"), "stderr \(npkOption.stderr)")
        let standard = try cli.run(["simulate", "--adapter", "hci1", "--dialect", "standard"])
        #expect(standard.status == 64)
        #expect(standard.stderr.contains("--dialect must be v1 or npk"), "stderr \(standard.stderr)")
    }
}
