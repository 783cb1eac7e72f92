import TSTestSupport
import Foundation
import Testing

@Suite struct CLIAlarmTests {
    @Test func alarmsGetPrintsTheGoldenTable() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["alarms", "get", "--simulate"])
        #expect(result.status == 0)
        #expect(result.stdout == """
            slot  time   repeat   on   snooze  label  remark
            0     06:45  Mon–Fri  yes  yes     Work

            """)
    }

    @Test func editsPersistBetweenInvocations() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["alarms", "add", "09:30", "--repeat", "sat,sun", "--label", "Weekend", "--snooze", "--simulate"]).stdout == "added alarm in slot 1 at 09:30\n")
        #expect(try await cli.runDetached(["alarms", "add", "21:00", "--repeat", "mon,wed,fri", "--label", "Medizin 💊", "--remark", "吃药", "--simulate"]).status == 0)
        #expect(try await cli.runDetached(["alarms", "disable", "0", "--simulate"]).stdout == "disabled the alarm in slot 0\n")
        #expect(try await cli.runDetached(["alarms", "remove", "1", "--simulate"]).status == 0)
        let result = try await cli.runDetached(["alarms", "get", "--simulate"])
        #expect(result.stdout == """
            slot  time   repeat         on   snooze  label       remark
            0     06:45  Mon–Fri        no   yes     Work
            2     21:00  Mon, Wed, Fri  yes  no      Medizin 💊  吃药

            """)
    }

    /// `--db NAME` without a folder: the simulated watch's memory is beside the database in the
    /// current directory (it went to "/simulated-watch.json", the root folder, once), so an edit
    /// persists there.
    @Test func aDatabaseWithoutAFolderKeepsTheSimulatedWatchBesideIt() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let set = try await cli.runDetached(["alarms", "set", "07:00", "--label", "Here", "--simulate", "--db", "relative.sqlite"])
        #expect(set.status == 0, "\(set.summary)")
        #expect(FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("relative.sqlite").path))
        #expect(FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("simulated-watch.json").path))
        let get = try await cli.runDetached(["alarms", "get", "--simulate", "--db", "relative.sqlite"])
        #expect(get.stdout.contains("07:00") && get.stdout.contains("Here"), "\(get.summary)")
    }

    @Test func setReplacesTheWholeTableFromFlagsOrAFile() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["alarms", "set", "07:00", "--repeat", "workdays", "--label", "Work", "--simulate"]).stdout == "set 1 alarm\n")
        let file = cli.home.appendingPathComponent("alarms.json")
        try Data(#"[{"time": "05:30", "repeat": ["sun"], "label": "Run"}, {"slot": 4, "time": "22:15", "enabled": false}]"#.utf8).write(to: file)
        #expect(try await cli.runDetached(["alarms", "set", "--file", file.path, "--simulate"]).stdout == "set 2 alarms\n")
        let object = try #require(try await cli.json(["alarms", "get", "--json", "--simulate"]) as? [String: Any])
        let alarms = try #require(object["alarms"] as? [[String: Any]])
        #expect(alarms.map { $0["time"] as? String } == ["05:30", "22:15"])
        #expect(alarms.map { $0["slot"] as? Int } == [0, 4])
        // `get --json` output is accepted back by `set --file`.
        let roundTrip = cli.home.appendingPathComponent("roundtrip.json")
        try Data(try await cli.runDetached(["alarms", "get", "--json", "--simulate"]).stdout.utf8).write(to: roundTrip)
        #expect(try await cli.runDetached(["alarms", "set", "--file", roundTrip.path, "--simulate"]).status == 0)
        #expect(try await cli.runDetached(["alarms", "set", "--file", "-", "--simulate"], stdin: "[]").stdout == "set 0 alarms\n")
        #expect(try await cli.runDetached(["alarms", "get", "--simulate"]).stdout == "no alarms\n")
    }

    @Test func alarmsJSONFollowsTheDocumentedSchema() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let object = try #require(try await cli.json(["alarms", "get", "--json", "--simulate"]) as? [String: Any])
        #expect(Set(object.keys) == ["watch", "alarms"])
        #expect(object["watch"] as? String == "00:00:5E:00:53:01")
        let alarm = try #require((object["alarms"] as? [[String: Any]])?.first)
        #expect(Set(alarm.keys) == ["slot", "time", "enabled", "snooze", "repeat", "label", "remark"])
        #expect(alarm["slot"] as? Int == 0)
        #expect(alarm["time"] as? String == "06:45")
        #expect(alarm["enabled"] as? Bool == true)
        #expect(alarm["snooze"] as? Bool == true)
        #expect(alarm["repeat"] as? [String] == ["mon", "tue", "wed", "thu", "fri"])
        #expect(alarm["label"] as? String == "Work")
        #expect(alarm["remark"] as? String == "")
    }

    @Test func watchPrintsChangesMadeOnTheWatch() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["alarms", "watch", "--count", "1", "--json", "--simulate"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let change = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(change["origin"] as? String == "watch")
        #expect(((change["alarms"] as? [[String: Any]])?.first?["time"] as? String) == "06:50")
    }
}

@Suite struct CLIDeviceTests {
    @Test func monitorSetThenGetRoundTrips() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let set = try await cli.runDetached(["monitor", "set", "heart-rate", "--window", "08:00-22:00", "--interval", "15", "--alert-high", "130", "--simulate"])
        #expect(set.stdout == "heartRate: on, 08:00-22:00 every 15 min, alert 40…130\n")
        let object = try #require(try await cli.json(["monitor", "get", "hr", "--json", "--simulate"]) as? [String: Any])
        let config = try #require((object["monitors"] as? [[String: Any]])?.first)
        #expect(config["type"] as? String == "heartRate")
        let schedule = try #require(config["schedule"] as? [String: Any])
        #expect(schedule["startMinute"] as? Int == 480)
        #expect(schedule["endMinute"] as? Int == 1320)
        #expect(schedule["intervalMinutes"] as? Int == 15)
        #expect((config["alert"] as? [String: Any])?["upper"] as? Int == 130)
    }

    @Test func monitorSetEnableAndDisableSwitchTheScheduleAsREADMEDocuments() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        func scheduleEnabled() async throws -> Bool? {
            let object = try #require(try await cli.json(["monitor", "get", "heart-rate", "--json", "--simulate"]) as? [String: Any])
            let config = try #require((object["monitors"] as? [[String: Any]])?.first)
            return (config["schedule"] as? [String: Any])?["enabled"] as? Bool
        }
        let disable = try await cli.runDetached(["monitor", "set", "heart-rate", "--disable", "--simulate"])
        #expect(disable.exited(0), "\(disable.summary)")
        #expect(try await scheduleEnabled() == false)
        // `--simulate` first, as README allows, and the other flags keep working beside `--enable`.
        let enable = try await cli.runDetached(["--simulate", "monitor", "set", "heart-rate", "--enable", "--interval", "10"])
        #expect(enable.exited(0), "\(enable.summary)")
        #expect(try await scheduleEnabled() == true)
        // A flag that leaves the schedule alone keeps it as it is.
        #expect(try await cli.runDetached(["monitor", "set", "heart-rate", "--interval", "20", "--simulate"]).exited(0))
        #expect(try await scheduleEnabled() == true)
        // The two contradict each other.
        #expect(try await cli.runDetached(["monitor", "set", "heart-rate", "--enable", "--disable", "--simulate"]).status == 64)
    }

    @Test func hrWatchPrintsTheSimulatedWatchsHeartRate() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["hr", "watch", "--simulate", "--count", "2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 2)
        for line in lines {
            #expect(line["type"] as? String == "heartRate", "the same JSON as `tsgateway events` prints")
            #expect(line["watch"] as? String == "00:00:5E:00:53:01")
            #expect((40...200).contains(line["bpm"] as? Int ?? 0))
            #expect(line["sensorContact"] as? String == "detected")
            #expect((line["rrIntervals"] as? [Int])?.count == 1)
        }
    }

    @Test func infoAndDevicesDescribeTheSimulatedWatch() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let info = try #require(try await cli.json(["info", "--json", "--simulate"]) as? [String: Any])
        #expect(info["services"] as? [String] == ["protocol-v1", "device-information", "battery", "current-time", "heart-rate"])
        #expect((info["deviceInformation"] as? [String: Any])?["manufacturer"] as? String == "tsgateway project")
        #expect(info["model"] as? String == "TS-Sim W10")
        #expect(((info["capabilities"] as? [String: Any])?["alarms"] as? [String: Any])?["maxCount"] as? Int == 10)
        #expect((info["battery"] as? [String: Any])?["level"] as? Int == 82)
        #expect(info["dialect"] as? String == "v1")
        let devices = try #require(try await cli.json(["devices", "--json"]) as? [[String: Any]])
        #expect(devices.map { $0["id"] as? String } == ["00:00:5E:00:53:01"])
        #expect(devices.map { $0["dialect"] as? String } == ["v1"])
        // The same simulated watch spoken to through its standard services alone.
        let band = try #require(try await cli.json(["info", "--json", "--simulate", "--dialect", "standard"]) as? [String: Any])
        #expect(band["dialect"] as? String == "standard")
        #expect(band["services"] as? [String] == ["device-information", "battery", "current-time", "heart-rate"])
        #expect(band["model"] as? String == "TS-Sim W10")
    }

    @Test func sleepSyncStoresAWeekThenResumes() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let first = try #require(try await cli.json(["sleep", "sync", "--since", "7d", "--json", "--simulate"]) as? [String: Any])
        let fetched = try #require(first["fetched"] as? Int)
        #expect(fetched > 100)
        #expect(first["stored"] as? Int == fetched)
        let second = try #require(try await cli.json(["sleep", "sync", "--since", "7d", "--json", "--simulate"]) as? [String: Any])
        #expect(second["stored"] as? Int == 0)
        let database = cli.home.appendingPathComponent("tsgateway/tsgateway.sqlite").path
        let mode = try FileManager.default.attributesOfItem(atPath: database)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

/// Bad input of every kind: each gets its own message and exit status, never a trap.
@Suite struct CLIBadInputTests {
    static let cases: [(arguments: [String], status: Int32, message: String)] = [
        (["alarms", "set", "25:00", "--simulate"], 64, #"time "25:00": hour 25 is out of range 0…23"#),
        (["alarms", "set", "07:60", "--simulate"], 64, #"time "07:60": minute 60 is out of range 0…59"#),
        (["alarms", "set", "7am", "--simulate"], 64, #"time "7am" is not HH:MM"#),
        (["alarms", "add", "07:00", "--repeat", "funday", "--simulate"], 64, #""funday" is not a day"#),
        (["alarms", "add", "07:00", "--label", String(repeating: "x", count: 40), "--simulate"], 65, "label is 40 bytes of UTF-8, limit 32"),
        (["alarms", "add", "07:00", "--remark", String(repeating: "r", count: 70), "--simulate"], 65, "remark is 70 bytes of UTF-8, limit 64"),
        (["alarms", "remove", "9", "--simulate"], 65, "no alarm in slot 9; used slots: 0"),
        (["alarms", "enable", "9", "--simulate"], 65, "no alarm in slot 9"),
        (["alarms", "add", "07:00", "--slot", "0", "--simulate"], 65, "slot 0 is taken"),
        (["alarms", "set", "--simulate"], 64, "give either a time (HH:MM) or --file FILE"),
        (["alarms", "set", "--file", "/nonexistent/alarms.json", "--simulate"], 66, "cannot read alarm file /nonexistent/alarms.json"),
        (["alarms", "enable", "300", "--simulate"], 64, "300"),
        (["alarms", "get"], 80, "no watch known yet; pass --device ADDRESS"),
        (["alarms", "get", "--device", "not-an-address"], 80, #""not-an-address" is neither a Bluetooth address"#),
        (["monitor", "set", "sleep", "--window", "22:00-07:00", "--simulate"], 64, "cannot wrap past midnight"),
        (["monitor", "set", "spo2", "--interval", "7", "--simulate"], 64, "--interval 7: must be a multiple of 5"),
        (["monitor", "get", "bogus", "--simulate"], 64, #"unknown monitor type "bogus""#),
        (["monitor", "set", "heart-rate", "--alert-high", "1.5", "--simulate"], 64, "heartRate limits are whole numbers"),
        (["monitor", "set", "stress", "--window", "8-9", "--simulate"], 64, #"time "8" is not HH:MM"#),
        (["sleep", "sync", "--since", "7x", "--simulate"], 64, #"--since "7x" is not an age"#),
        (["sleep", "sync", "--from", "2026-02-30", "--simulate"], 64, #"--from "2026-02-30" is not a date"#),
        (["sleep", "sync", "--from", "2026-13-01", "--simulate"], 64, #"--from "2026-13-01" is not a date"#),
        (["sleep", "sync", "--to", "2026-01-01", "--simulate"], 64, "--to needs --from"),
        (["sleep", "sync", "--from", "2026-02-10", "--to", "2026-02-01", "--simulate"], 64, "is before --from"),
        (["info", "--adapter", "wlan0", "--simulate"], 64, "--adapter must look like hci0"),
        (["info", "--dialect", "klingon", "--simulate"], 64, #"--dialect "klingon" is not a dialect tsgateway speaks; use one of v1, standard"#),
        (["alarms", "get", "--dialect", "standard", "--simulate"], 79, "alarms — it has no protocol v1 service"),
        (["protocol", "decode", "zz"], 65, "input character 1 ('z') is not a hex digit"),
        (["protocol", "decode", "a5 0"], 65, "odd number of digits"),
        (["protocol", "encode", #"{"kind": "battery.response", "body": {"level": 101, "state": "full"}}"#], 65, "battery level 101 is out of range 0…100"),
        (["protocol", "encode", #"{"kind": "nope"}"#], 65, #"unknown message kind "nope""#),
        (["frobnicate"], 64, "frobnicate"),
        // A watch's address is parsed with the command line: the argument and the form it takes are named.
        (["pair", "AA:BB:CC:DD:EE"], 64, "The value 'AA:BB:CC:DD:EE' is invalid for '<address>': expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF"),
        (["unpair", "kitchen"], 64, "The value 'kitchen' is invalid for '<address>': expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF"),
        (["probe", "AA:BB:CC:DD:EE:GG"], 64, "The value 'AA:BB:CC:DD:EE:GG' is invalid for '<address>': expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF"),
    ]

    @Test(arguments: cases.indices)
    func badInputIsRefusedWithItsMessage(index: Int) async throws {
        let (arguments, status, message) = Self.cases[index]
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(arguments)
        #expect(result.status == status, "\(arguments): stderr \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): stderr \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "trapped")
    }

    @Test func tooManyAlarmsFromAFileNamesTheLimit() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let file = cli.home.appendingPathComponent("thirteen.json")
        let entries = (0..<13).map { #"{"time": "07:\#(String(format: "%02d", $0))"}"# }.joined(separator: ",")
        try Data("[\(entries)]".utf8).write(to: file)
        let result = try await cli.runDetached(["alarms", "set", "--file", file.path, "--simulate"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("13 alarms given, but this watch holds at most 10"))
        let full = try CLI(); defer { full.cleanUp() }
        for hour in 10..<19 { try await full.runDetached(["alarms", "add", "\(hour):00", "--simulate"]) }
        let eleventh = try await full.runDetached(["alarms", "add", "20:00", "--simulate"])
        #expect(eleventh.status == 65)
        #expect(eleventh.stderr.contains("the watch already holds 10 alarms, its limit"))
    }

    @Test func aCorruptAlarmFileNamesTheProblem() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let file = cli.home.appendingPathComponent("bad.json")
        try Data(#"[{"time": "07:00"}, {"time": "31:00"}]"#.utf8).write(to: file)
        let result = try await cli.runDetached(["alarms", "set", "--file", file.path, "--simulate"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("alarm 2: time \"31:00\": hour 31 is out of range 0…23"))
        try Data("not json".utf8).write(to: file)
        #expect(try await cli.runDetached(["alarms", "set", "--file", file.path, "--simulate"]).status == 65)
    }
}

@Suite struct CLISleepShowTests {
    @Test func aSyncedWeekShowsNightsNapsAndHypnograms() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        // Exactly as the README and the issue spell it: the global flag first.
        #expect(try await cli.runDetached(["--simulate", "sleep", "sync", "--since", "7d"]).status == 0)
        let result = try await cli.runDetached(["--simulate", "sleep", "show", "--last", "7d"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Sleep of 00:00:5E:00:53:01 (rule 1, with naps; Europe/Berlin)")
        let nights = lines.filter { $0.hasPrefix("  night ") }
        #expect(nights.count >= 6, "a week of nights")
        #expect(lines.contains { $0.hasPrefix("  nap ") }, "the simulated week has naps")
        #expect(lines.filter { $0.hasPrefix("  total ") }.count == lines.filter { $0.range(of: #"^\d{4}-\d{2}-\d{2}  from"#, options: .regularExpression) != nil }.count)
        for stage in ["awake │", "REM   │", "light │", "deep  │"] {
            #expect(lines.filter { $0.hasPrefix("    " + stage) }.count == nights.count, "one \(stage) row per night")
        }
        #expect(lines.contains { $0.hasPrefix("    deep  │") && $0.contains("█") })
        let bare = try await cli.runDetached(["sleep", "show", "--last", "7d", "--no-chart", "--simulate"])
        #expect(!bare.stdout.contains("│"))
    }

    /// The simulated watch's clock pinned, so the week and therefore the output are fixed.
    @Test func showPrintsTheGoldenDayWithNightNapAndHypnogram() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-20T08:00:00Z"]
        #expect(try await cli.runDetached(["--simulate", "sleep", "sync", "--from", "2026-11-16", "--to", "2026-11-19"], environment: pinned).status == 0)
        let result = try await cli.runDetached(["--simulate", "sleep", "show", "--date", "2026-11-18", "--tz", "Europe/Berlin"], environment: pinned)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            Sleep of 00:00:5E:00:53:01 (rule 1, with naps; Europe/Berlin)

            2026-11-18  from   to     asleep  deep  light  rem  awake  wakes  quality
              night     23:33  07:24  7h34m   18%   49%    29%  4%     2      81
              nap       15:38  16:28  0h50m   20%   80%    0%   0%     0      49
              total                   8h24m   18%   52%    27%  3%     2      84
                awake │██                                                          │
                REM   │          █         █     ███      █████     ████    █████  │
                light │  ███    █ ████   ██ ██ ██   ███ ██     █████    ██ █     ██│
                deep  │     ████      ███     █        █                  █        │
                      └────────────────────────────────────────────────────────────┘
                       23:33                                                  07:24

            """)
    }

    @Test func showJSONHasTheDocumentedShape() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["sleep", "sync", "--since", "3d", "--simulate"]).status == 0)
        let object = try #require(try await cli.json(["sleep", "show", "--last", "3d", "--json", "--simulate"]) as? [String: Any])
        #expect(Set(object.keys) == ["watch", "timeZone", "rule", "days"])
        #expect(object["rule"] as? Int == 1)
        let day = try #require((object["days"] as? [[String: Any]])?.first)
        for key in ["date", "statisticsRule", "dailySummary", "nightSleeps", "daytimeSleeps", "validNaps", "rawItems"] {
            #expect(day[key] != nil, "day has \(key)")
        }
    }

    @Test func showExplainsWhatIsMissing() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let empty = try await cli.runDetached(["sleep", "show", "--simulate"])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("run `tsgateway sleep sync --since 7d --simulate` first"))
        let nobody = try await cli.runDetached(["sleep", "show"])
        #expect(nobody.status == 80)
        #expect(nobody.stderr.contains("no watch known yet"))
        let badDate = try await cli.runDetached(["sleep", "show", "--date", "2026-13-01", "--simulate"])
        #expect(badDate.status == 64)
        #expect(badDate.stderr.contains(#"--date "2026-13-01" is not a date"#))
        let badAge = try await cli.runDetached(["sleep", "show", "--last", "forever", "--simulate"])
        #expect(badAge.status == 64)
        #expect(badAge.stderr.contains(#"--last "forever" is not an age"#))
        // JSON output of an empty range is an empty list, not an error (scripts can test "days").
        let emptyJSON = try #require(try await cli.json(["sleep", "show", "--json", "--simulate"]) as? [String: Any])
        #expect((emptyJSON["days"] as? [Any])?.isEmpty == true)
    }
}

@Suite struct CLISleepExportTests {
    @Test func exportsInEveryFormatAgreeWithTheStore() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let synced = try #require(try await cli.json(["sleep", "sync", "--since", "7d", "--json", "--simulate"]) as? [String: Any])
        let stored = try #require(synced["stored"] as? Int)
        let json = try #require(try await cli.json(["sleep", "export", "--format", "json", "--last", "8d", "--simulate"]) as? [String: Any])
        let records = try #require(json["records"] as? [[String: Any]])
        #expect(records.count == stored)
        #expect(Set(records[0].keys) == ["stage", "start", "duration"])

        let file = cli.home.appendingPathComponent("week.csv")
        let written = try await cli.runDetached(["sleep", "export", "--format", "csv", "--last", "8d", "--out", file.path, "--simulate"])
        #expect(written.status == 0)
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "start,end,stage,duration")
        #expect(lines.count == stored + 1)
        #expect(lines[1].range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00,.*,(awake|light|deep|rem),\d+$"#, options: .regularExpression) != nil)
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        let again = try await cli.runDetached(["sleep", "export", "--format", "csv", "--out", file.path, "--simulate"])
        #expect(again.status == 74)
        #expect(again.stderr.contains("exists; add --force to overwrite it"))
        #expect(try await cli.runDetached(["sleep", "export", "--format", "csv", "--out", file.path, "--force", "--simulate"]).status == 0)

        let health = try #require(try await cli.json(["sleep", "export", "--format", "healthkit", "--last", "8d", "--simulate"]) as? [String: Any])
        let values = Set((health["samples"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String })
        #expect(values.isSuperset(of: ["in_bed", "core", "deep", "rem"]))
        #expect(values.isSubset(of: ["in_bed", "awake", "core", "deep", "rem"]))
        #expect(try await cli.runDetached(["sleep", "export", "--format", "xml", "--simulate"]).status == 64)
        let unwritable = try await cli.runDetached(["sleep", "export", "--out", "/nonexistent-dir/x.csv", "--simulate"])
        #expect(unwritable.status == 74)
        #expect(unwritable.stderr.contains("cannot write /nonexistent-dir/x.csv: No such file or directory; check that /nonexistent-dir exists and that this user may write there"))
    }
}
