import Foundation
import Testing
import TSTestSupport

/// The sleep report in a real browser: Debian's headless Chromium (installed by scripts/bootstrap)
/// loads it through scripts/lib/report_browser.py, once preferring light and once dark colours. The
/// screenshots stay in .build/artifacts/ (CI keeps them).
@Suite struct SleepReportBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let artifacts = root.appendingPathComponent(".build/artifacts")

    static var chromium: String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { "\($0)/chromium" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Skipped only where chromium is missing outside CI; in CI (CI=true) a missing browser fails the test.
    static var runs: Bool { chromium != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    @Test(.enabled(if: runs, "Debian's chromium is not installed (scripts/bootstrap installs it): the report is not checked in a browser"),
          .timeLimit(.minutes(3)))
    func theReportLoadsInChromiumWithEveryChartAndNoErrors() async throws {
        try #require(Self.chromium != nil, "CI must have Debian's chromium; scripts/bootstrap installs it")
        let cli = try CLI(); defer { cli.cleanUp() }
        // Thirty days around the end of summer time (25 October 2026 in Berlin), with naps.
        let pinned = ["TSGATEWAY_SIMULATOR_NOW": "2026-11-21T08:00:00Z"]
        #expect(try await cli.runDetached(["sleep", "sync", "--from", "2026-10-19", "--to", "2026-11-21", "--simulate"], environment: pinned).status == 0)
        let made = try await cli.runDetached(["sleep", "report", "--from", "2026-10-22", "--to", "2026-11-20", "--tz", "Europe/Berlin", "--out", "report.html", "--simulate"],
                               environment: pinned)
        #expect(made.status == 0, "\(made.summary)")
        let page = try String(contentsOf: cli.home.appendingPathComponent("report.html"), encoding: .utf8)
        func count(_ kind: String) -> Int { page.components(separatedBy: "class=\"chart \(kind)").count - 1 }

        let png = Self.artifacts.appendingPathComponent("sleep-report.png"), dark = Self.artifacts.appendingPathComponent("sleep-report-dark.png")
        try? FileManager.default.removeItem(at: png)
        try? FileManager.default.removeItem(at: dark)
        let browser = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: [
            "python3", Self.root.appendingPathComponent("scripts/lib/report_browser.py").path, cli.home.appendingPathComponent("report.html").path,
            "--png", png.path, "--dark-png", dark.path,
        ], timeout: .seconds(150))
        #expect(browser.exited(0), "\(browser.summary)")
        struct Findings: Decodable {
            var consoleErrors: [String]
            var requests: [String]
            var charts: [String: Int]
            var untitled: Int
            var unrendered: Int
            var background: [String: String]
        }
        let found = try JSONDecoder().decode(Findings.self, from: Data(browser.stdout.utf8))
        #expect(found.consoleErrors.isEmpty, "\(found.consoleErrors)")
        #expect(found.requests.isEmpty, "the page asked for \(found.requests)")
        // What the browser built from the page is every chart the file holds: a hypnogram per
        // night and nap, the stage bars, and the trends.
        let nights = count("hypnogram night"), naps = count("hypnogram nap")
        #expect(nights >= 25 && naps >= 1, "the simulated month has nights and naps: \(nights), \(naps)")
        #expect(found.charts["night"] == nights && found.charts["nap"] == naps)
        #expect(found.charts["stage-bars"] == 1 && found.charts["trend"] == count("trend"))
        #expect(found.charts["all"] == count(""))
        #expect(found.untitled == 0 && found.unrendered == 0)
        #expect(found.background["light"] != found.background["dark"], "dark mode changes the page: \(found.background)")
        for file in [png, dark] {
            let data = try Data(contentsOf: file)
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]) && data.count > 20_000, "\(file.path): \(data.count) bytes")
        }
        print("browser screenshots of the sleep report: \(png.path), \(dark.path)")
    }
}
