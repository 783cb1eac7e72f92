import TSTestSupport
import Foundation
import Testing

/// `alarms set|add --smart`, `alarms get` and `info` with the simulated watch speaking protocol
/// v1.1 (the default) and as a version-1 watch (TSGATEWAY_SIMULATOR_PROTOCOL=1.0).
@Suite struct SmartWakeCLITests {
    static let version1 = ["TSGATEWAY_SIMULATOR_PROTOCOL": "1.0"]

    /// The value of `info`'s row `name`.
    static func row(_ name: String, in table: String) -> String? {
        table.split(separator: "\n").first { $0.hasPrefix(name + "  ") }.map { $0.dropFirst(name.count).trimmingCharacters(in: .whitespaces) }
    }

    @Test func smartWindowIsSetShownAndKeptByAdd() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["alarms", "set", "07:00", "--repeat", "workdays", "--label", "Work", "--smart", "30", "--simulate"]).stdout == "set 1 alarm\n")
        #expect(try await cli.runDetached(["alarms", "add", "09:30", "--repeat", "weekends", "--simulate"]).stdout == "added alarm in slot 1 at 09:30\n")
        let text = try await cli.runDetached(["alarms", "get", "--simulate"])
        #expect(text.stdout == """
            slot  time   repeat    on   snooze  smart   label  remark
            0     07:00  Mon–Fri   yes  no      30 min  Work
            1     09:30  Sat, Sun  yes  no      –

            """)
        let object = try #require(try await cli.json(["alarms", "get", "--json", "--simulate"]) as? [String: Any])
        let alarms = try #require(object["alarms"] as? [[String: Any]])
        #expect(alarms.first?["smart"] as? Int == 30)
        #expect(alarms.last?.keys.contains("smart") == false, "left out when off")
    }

    @Test func aTableFileCarriesSmartWindows() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let file = cli.home.appendingPathComponent("alarms.json")
        try Data(#"[{"time": "06:30", "smart": 45}, {"time": "08:00", "smart": 0}]"#.utf8).write(to: file)
        #expect(try await cli.runDetached(["alarms", "set", "--file", file.path, "--simulate"]).stdout == "set 2 alarms\n")
        let object = try #require(try await cli.json(["alarms", "get", "--json", "--simulate"]) as? [String: Any])
        #expect((object["alarms"] as? [[String: Any]])?.map { $0["smart"] as? Int } == [45, nil])
    }

    @Test func aWindowOverTheWatchsLimitIsRefusedWithTheLimit() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["alarms", "add", "06:00", "--smart", "90", "--simulate"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("alarm in slot 1: smart window is 90 minutes, this watch's limit is 60"), "\(result.stderr)")
        let outOfRange = try await cli.runDetached(["alarms", "set", "06:00", "--smart", "300", "--simulate"])
        #expect(outOfRange.status == 64)
        #expect(outOfRange.stderr.contains("smart window 300 is out of range 0…255 minutes"), "\(outOfRange.stderr)")
    }

    @Test func aVersionOneWatchRefusesSmartWindowsAsNotSupported() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let refused = try await cli.runDetached(["alarms", "set", "07:00", "--smart", "30", "--simulate"], environment: Self.version1)
        #expect(refused.status == 79, "\(refused.stderr)")
        #expect(refused.stderr.contains("does not support smart wake windows"), "\(refused.stderr)")
        #expect(refused.stderr.contains("limit is 0"), "\(refused.stderr)")
        #expect(try await cli.runDetached(["alarms", "get", "--simulate"], environment: Self.version1).stdout.contains("06:45"), "the table is unchanged")
        #expect(try await cli.runDetached(["alarms", "set", "07:00", "--simulate"], environment: Self.version1).status == 0)

        let info = try await cli.runDetached(["info", "--simulate"], environment: Self.version1)
        #expect(Self.row("smart wake", in: info.stdout) == "no (protocol v1 without the v1.1 alarm extensions)", "\(info.stdout)")
        let json = try #require(try await cli.json(["info", "--json", "--simulate"], environment: Self.version1) as? [String: Any])
        let capabilities = try #require(json["capabilities"] as? [String: Any])
        #expect((capabilities["alarms"] as? [String: Any])?["maxSmartWindow"] as? Int == 0)
        #expect(capabilities["ring"] as? Bool == false)
    }

    @Test func infoShowsTheSmartWakeLimits() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let info = try await cli.runDetached(["info", "--simulate"])
        #expect(Self.row("smart wake", in: info.stdout) == "windows up to 60 min (`alarms set --smart`), rings on command, reports rings", "\(info.stdout)")
        let json = try #require(try await cli.json(["info", "--json", "--simulate"]) as? [String: Any])
        let capabilities = try #require(json["capabilities"] as? [String: Any])
        #expect((capabilities["alarms"] as? [String: Any])?["maxSmartWindow"] as? Int == 60)
        #expect(capabilities["alarmAlerts"] as? Bool == true)
    }

    @Test func anUnknownSimulatorProtocolIsABadCommandLine() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["alarms", "get", "--simulate"], environment: ["TSGATEWAY_SIMULATOR_PROTOCOL": "2.0"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("TSGATEWAY_SIMULATOR_PROTOCOL=2.0 is not a protocol the simulated watch speaks"), "\(result.stderr)")
    }
}
