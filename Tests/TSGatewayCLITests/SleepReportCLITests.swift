import Foundation
import Testing
import TSTestSupport

@Suite struct CLISleepReportTests {
    static let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-21T08:00:00Z"]

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// The night hypnograms of a page, by the date each is for.
    static func nightDates(_ page: String) -> [String] {
        page.components(separatedBy: "class=\"chart hypnogram night\"").dropFirst().compactMap { chunk in
            chunk.range(of: "data-date=\"").map { String(chunk[$0.upperBound...].prefix(10)) }
        }
    }

    @Test func aReportHasAHypnogramForEachNightTheDaysHold() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["sleep", "sync", "--from", "2026-11-10", "--to", "2026-11-21", "--simulate"], environment: Self.pinned).status == 0)
        let result = try await cli.runDetached(["sleep", "report", "--from", "2026-11-14", "--to", "2026-11-20", "--tz", "Europe/Berlin", "--out", "week.html", "--simulate"],
                                 environment: Self.pinned)
        #expect(result.status == 0, "\(result.summary)")
        let path = cli.home.appendingPathComponent("week.html").path
        #expect(try Self.mode(path) == 0o600, "health data: owner only")
        let page = try String(contentsOfFile: path, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("<title>Sleep of Simulated watch, 2026-11-14 to 2026-11-20</title>"))
        #expect(page.contains("Times in <strong>Europe/Berlin</strong>") && page.contains("Statistics rule <strong>1</strong>"))

        // The nights `sleep show` has for each date of the range, newest first.
        var nights: [String] = []
        for day in 14...20 {
            let date = "2026-11-\(day)"
            let json = try #require(try await cli.json(["sleep", "show", "--date", date, "--json", "--tz", "Europe/Berlin", "--simulate"]) as? [String: Any])
            let days = try #require(json["days"] as? [[String: Any]])
            if days.contains(where: { !(($0["nightSleeps"] as? [Any]) ?? []).isEmpty }) { nights.insert(date, at: 0) }
        }
        #expect(!nights.isEmpty)
        #expect(Self.nightDates(page) == nights)
        #expect(result.stderr == "wrote the sleep report of 2026-11-14 to 2026-11-20 (\(nights.count) nights) to week.html\n")

        // Another rule is stated; standard output takes the page too.
        let rule2 = try await cli.runDetached(["sleep", "report", "--from", "2026-11-14", "--to", "2026-11-20", "--rule", "2", "--tz", "Europe/Berlin", "--out", "-", "--simulate"],
                                environment: Self.pinned)
        #expect(rule2.status == 0 && rule2.stdout.contains("Statistics rule <strong>2</strong>, longest night"), "\(rule2.summary)")
    }

    @Test func anExistingFileIsKeptUnlessForced() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["sleep", "sync", "--since", "3d", "--simulate"]).status == 0)
        let path = cli.home.appendingPathComponent("notes.html")
        try Data("mine".utf8).write(to: path)
        let refused = try await cli.runDetached(["sleep", "report", "--last", "3d", "--out", "notes.html", "--simulate"])
        #expect(refused.status == 74 && refused.stderr.contains("notes.html exists; add --force to overwrite it"), "\(refused.summary)")
        #expect(try String(contentsOf: path, encoding: .utf8) == "mine")
        #expect(try await cli.runDetached(["sleep", "report", "--last", "3d", "--out", "notes.html", "--force", "--simulate"]).status == 0)
        #expect(try String(contentsOf: path, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try Self.mode(path.path) == 0o600)
    }

    @Test func badRangesAndMissingRecordsAreExplained() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let cases: [([String], Int32, String)] = [
            (["--from", "2026-11-20", "--to", "2026-11-01"], 64, "--from 2026-11-20 is after --to 2026-11-01"),
            (["--from", "2099-01-01"], 64, "--from 2099-01-01 is after today, "),
            (["--to", "2026-11-01"], 64, "--to needs --from"),
            (["--from", "2026-02-30"], 64, "--from \"2026-02-30\" is not a date YYYY-MM-DD"),
            (["--from", "2025-01-01", "--to", "2026-11-01"], 64, "a report covers at most 366 days"),
            (["--last", "30d", "--from", "2026-11-01"], 64, "give --last or --from/--to, not both"),
            (["--rule", "7"], 64, "--rule must be 0, 1, 2 or 3; got 7"),
            (["--tz", "Mars/Olympus"], 64, "unknown time zone \"Mars/Olympus\""),
            ([], 1, "run `tsgateway sleep sync --since 30d --simulate` first"),
        ]
        for (arguments, status, message) in cases {
            let result = try await cli.runDetached(["sleep", "report"] + arguments + ["--out", "r.html", "--simulate"])
            #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.summary)")
        }
        #expect(try await cli.runDetached(["sleep", "sync", "--since", "3d", "--simulate"]).status == 0)
        let unwritable = try await cli.runDetached(["sleep", "report", "--last", "3d", "--out", "/nonexistent-dir/r.html", "--simulate"])
        #expect(unwritable.status == 74 && unwritable.stderr.contains("cannot write /nonexistent-dir/r.html: No such file or directory"), "\(unwritable.summary)")
        #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("r.html").path))
    }

    @Test func showWritesOneNightsHypnogramAsSVG() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        #expect(try await cli.runDetached(["sleep", "sync", "--from", "2026-11-16", "--to", "2026-11-21", "--simulate"], environment: Self.pinned).status == 0)
        let result = try await cli.runDetached(["sleep", "show", "--date", "2026-11-20", "--svg", "night.svg", "--tz", "Europe/Berlin", "--simulate"], environment: Self.pinned)
        #expect(result.status == 0, "\(result.summary)")
        #expect(result.stderr == "wrote the hypnogram of the night to 2026-11-20 to night.svg\n")
        #expect(result.stdout.contains("2026-11-20  from"), "the table is still printed")
        let path = cli.home.appendingPathComponent("night.svg").path
        #expect(try Self.mode(path) == 0o600)
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        #expect(svg.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart hypnogram night\""))
        #expect(svg.contains("data-date=\"2026-11-20\"") && svg.contains("Europe/Berlin</text>"))
        #expect(svg.components(separatedBy: "<svg").count == 2, "one hypnogram")

        let again = try await cli.runDetached(["sleep", "show", "--date", "2026-11-20", "--svg", "night.svg", "--simulate"], environment: Self.pinned)
        #expect(again.status == 74 && again.stderr.contains("night.svg exists; add --force to overwrite it"))
        let none = try await cli.runDetached(["sleep", "show", "--date", "2026-10-01", "--svg", "october.svg", "--simulate"], environment: Self.pinned)
        #expect(none.status == 1 && none.stderr.contains("no night sleep for 00:00:5E:00:53:01 on 2026-10-01 to draw"), "\(none.summary)")
        #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("october.svg").path))
    }

    @Test func serveCheckListsTheReportFilesAndRefusesABadSection() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let config = cli.home.appendingPathComponent("serve.yaml")
        let watches = "watches:\n  - simulated: true\n    name: bedroom\n  - simulated: true\n"
        try Data("report:\n  directory: /srv/sleep\n  days: 7\n  every: 15m\n  mode: 0644\n\(watches)".utf8).write(to: config)
        let checked = try await cli.runDetached(["serve", "--config", config.path, "--check"])
        #expect(checked.status == 0, "\(checked.summary)")
        #expect(checked.stdout.contains("sleep reports of 7 days every 15 min into /srv/sleep (mode 0644): sleep-bedroom.html, sleep-00005E005402.html\n"), "\(checked.stdout)")
        try Data("report:\n  directory: /srv/sleep\n  mode: 0777\n\(watches)".utf8).write(to: config)
        let refused = try await cli.runDetached(["serve", "--config", config.path, "--check"])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("\(config.path):3: report mode must be 0600 (owner only, the default), 0640 (and the group) or 0644 (everyone), got \"0777\""),
                "\(refused.summary)")
    }
}
