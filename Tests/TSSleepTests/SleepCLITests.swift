import Foundation
import Testing
import TSTestSupport

@Suite struct SleepCLITests {
    /// Example 1 of the spec as a user would type it (Europe/Berlin, 2026-01-14/15).
    static let plainNightCSV = """
        # plain night
        stage,start,duration
        awake,2026-01-14T22:50:00+01:00,600
        light,2026-01-14T23:00:00+01:00,5400
        deep,1768433400,3600
        rem,1768437000,1800
        awake,1768438800,600
        light,1768439400,7200
        deep,1768446600,1800
        rem,1768448400,3600
        light,1768452000,3000
        awake,1768455000,900

        """

    static var plainNightJSON: String {
        let rows: [(String, Int64, Int64)] = [
            ("awake", 1_768_427_400, 600), ("light", 1_768_428_000, 5_400), ("deep", 1_768_433_400, 3_600),
            ("rem", 1_768_437_000, 1_800), ("awake", 1_768_438_800, 600), ("light", 1_768_439_400, 7_200),
            ("deep", 1_768_446_600, 1_800), ("rem", 1_768_448_400, 3_600), ("light", 1_768_452_000, 3_000),
            ("awake", 1_768_455_000, 900),
        ]
        return "[\n" + rows.map { #"  {"stage": "\#($0.0)", "start": \#($0.1), "duration": \#($0.2)}"# }.joined(separator: ",\n") + "\n]\n"
    }

    static let expectedRow = ["2026-01-15", "7h20m", "7h40m", "22:50", "06:30", "20%", "56%", "20%", "4%", "1", "0", "85"]

    static func tableRow(_ output: String, date: String) -> [String]? {
        output.split(separator: "\n").first { $0.hasPrefix(date) }.map { $0.split(separator: " ").map(String.init) }
    }

    @Test func analyzesAJSONFile() async throws {
        let path = try CLI.file("night.json", Self.plainNightJSON)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--rule", "1", "--tz", "Europe/Berlin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Sleep by day (rule 1, with naps; time zone Europe/Berlin)"))
        #expect(Self.tableRow(result.stdout, date: "2026-01-15") == Self.expectedRow)
        #expect(result.stderr.isEmpty)
    }

    @Test func analyzesACSVFileWithISOAndUnixTimes() async throws {
        let path = try CLI.file("night.csv", Self.plainNightCSV)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--rule", "1", "--tz", "Europe/Berlin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.tableRow(result.stdout, date: "2026-01-15") == Self.expectedRow)
    }

    @Test func detectsTheFormatFromContentWithoutAnExtension() async throws {
        let path = try CLI.file("night.txt", Self.plainNightJSON)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--tz", "Europe/Berlin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.tableRow(result.stdout, date: "2026-01-15") == Self.expectedRow, "rule 1 is the default")
    }

    @Test func sameNightInAnotherZoneLandsElsewhere() async throws {
        let path = try CLI.file("night.json", Self.plainNightJSON)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--tz", "America/New_York"])
        #expect(result.status == 0)
        // 22:50 in Berlin is 16:50 in New York: 16:50–20:00 is a 3 h 10 min daytime stretch on
        // the 14th (too long for a valid nap), and the items from 20:00 on are the 15th's night.
        #expect(Self.tableRow(result.stdout, date: "2026-01-14") == ["2026-01-14", "0h00m", "0h00m", "-", "-", "0%", "0%", "0%", "0%", "0", "0", "0"])
        #expect(Self.tableRow(result.stdout, date: "2026-01-15")?[3] == "20:00")
    }

    @Test func missingFileIsNoInput() async throws {
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", "/nonexistent/sleep.json", "--tz", "UTC"])
        #expect(result.status == 66)
        #expect(result.stderr == "tsgateway: cannot read /nonexistent/sleep.json: no such file\n")
    }

    @Test func badCSVRowNamesLineAndField() async throws {
        let csv = "stage,start,duration\nlight,1768428000,600\n\nlight,1768429000,ten minutes\n"
        let path = try CLI.file("bad.csv", csv)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--tz", "UTC"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("bad.csv line 4, field \"duration\": \"ten minutes\" is not a whole number of seconds"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func badCSVStageAndMissingField() async throws {
        let stage = try await CLI.runOnceDetached(["sleep", "analyze", "--input", try CLI.file("a.csv", "nap,1768428000,600\n"), "--tz", "UTC"])
        #expect(stage.status == 65 && stage.stderr.contains("line 1, field \"stage\""), "\(stage.stderr)")
        let short = try await CLI.runOnceDetached(["sleep", "analyze", "--input", try CLI.file("b.csv", "light,1768428000,60\nlight,1768428060\n"), "--tz", "UTC"])
        #expect(short.status == 65 && short.stderr.contains("line 2, field \"duration\": missing"), "\(short.stderr)")
    }

    @Test func badJSONRowNamesLineAndField() async throws {
        let json = "[\n  {\"stage\": \"light\", \"start\": 1768428000, \"duration\": 600},\n  {\"stage\": \"light\",\n   \"start\": true, \"duration\": 60}\n]\n"
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", try CLI.file("bad.json", json), "--tz", "UTC"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("bad.json line 4, field \"start\""), "\(result.stderr)")
        let syntax = try await CLI.runOnceDetached(["sleep", "analyze", "--input", try CLI.file("syntax.json", "[\n {\"stage\": \"light\" \"start\": 1}\n]"), "--tz", "UTC"])
        #expect(syntax.status == 65 && syntax.stderr.contains("syntax.json line 2: not valid JSON"), "\(syntax.stderr)")
    }

    @Test func unknownRuleIsUsage() async throws {
        let path = try CLI.file("night.json", Self.plainNightJSON)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--rule", "4", "--tz", "UTC"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("tsgateway: unknown statistics rule \"4\""))
    }

    @Test func unknownZoneIsUsage() async throws {
        let path = try CLI.file("night.json", Self.plainNightJSON)
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--tz", "Mars/Olympus_Mons"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("tsgateway: unknown time zone \"Mars/Olympus_Mons\""))
    }

    @Test func jsonOutputHasTheDocumentedShape() async throws {
        let path = try CLI.file("night.json", Self.plainNightJSON + "")
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", path, "--rule", "2", "--tz", "Europe/Berlin", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(document.keys) == ["schemaVersion", "statisticsRule", "timeZone", "input", "days"])
        #expect(document["schemaVersion"] as? Int == 1 && document["statisticsRule"] as? Int == 2)
        #expect(document["timeZone"] as? String == "Europe/Berlin")
        #expect((document["input"] as? [String: Any])?["kept"] as? Int == 10)
        let day = try #require((document["days"] as? [[String: Any]])?.first)
        #expect(Set(day.keys) == ["date", "belongingDate", "statisticsRule", "dailySummary", "metrics", "rawItems", "nightSleeps", "daytimeSleeps", "validNaps"])
        let summary = try #require(day["dailySummary"] as? [String: Any])
        #expect(summary["qualityScore"] as? Int == 85 && summary["totalSleepDuration"] as? Int == 26_400)
        let metrics = try #require(day["metrics"] as? [String: Any])
        #expect(Set(metrics.keys) == ["timeInBed", "totalSleepDuration", "sleepEfficiency", "sleepOnsetLatency", "finalWakeTime", "numberOfAwakenings", "stageDurations"])
        let night = try #require((day["nightSleeps"] as? [[String: Any]])?.first)
        #expect((night["epochs"] as? [String: Any])?["epochSeconds"] as? Int == 30)
        #expect(((night["detailItems"] as? [[String: Any]])?.first)?["stage"] as? String == "awake")
    }

    @Test func cleaningIsReportedOnStandardError() async throws {
        let csv = "light,1768428000,600\nlight,1768428000,600\ndeep,1768430000,0\n"
        let result = try await CLI.runOnceDetached(["sleep", "analyze", "--input", try CLI.file("dup.csv", csv), "--tz", "UTC"])
        #expect(result.status == 0)
        #expect(result.stderr == "tsgateway: note: 2 of 3 items dropped (1 zero or negative duration, 1 duplicate)\n")
    }
}
