import Foundation
@testable import TSGatewayAPI
import TSFiles
import TSGatewayService
import TSModels
import TSTestSupport
import Testing

@Suite("sleep reports written by the daemon")
struct ReportWriterTests {
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-report-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func leftovers(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") }
    }

    @Test("a report replaces the old file by renaming a new one over it, with the mode asked for")
    func atomicReplace() throws {
        let directory = try Self.scratch(); defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sleep-bedroom.html").path
        try Data("old page".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)
        // A second name for the old file: a reader that opened it before keeps reading the old page whole.
        let reader = directory.appendingPathComponent("reader.html").path
        try FileManager.default.linkItem(atPath: path, toPath: reader)

        try PrivateFile.write("new page", to: path, mode: 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new page")
        #expect(try String(contentsOfFile: reader, encoding: .utf8) == "old page")
        #expect(try Self.mode(path) == 0o600)
        #expect(try Self.leftovers(directory).isEmpty)

        try PrivateFile.write("shared page", to: path, mode: 0o644)
        #expect(try Self.mode(path) == 0o644)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "shared page")
    }

    @Test("a directory that cannot be written to is a storage error that says what to check, and leaves nothing behind")
    func unwritable() throws {
        let directory = try Self.scratch(); defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing/sleep.html").path
        let error = try #require(throws: FileWriteError.self) { try PrivateFile.write("page", to: missing, mode: 0o600) }
        #expect(error.category == .storage)
        #expect(error.description == "cannot write \(missing): No such file or directory; check that \(directory.path)/missing exists and that this user may write there")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        let file = directory.appendingPathComponent("plain").path
        try Data().write(to: URL(fileURLWithPath: file))
        let notDirectory = try #require(throws: FileWriteError.self) { try PrivateFile.prepareDirectory(file, mode: 0o600) }
        #expect(notDirectory.description == "cannot write \(file): it is a file, not a directory")
    }

    @Test("a missing directory is created for the owner only, or readable by everyone when the files are 0644")
    func createsDirectory() throws {
        let directory = try Self.scratch(); defer { try? FileManager.default.removeItem(at: directory) }
        let private_ = directory.appendingPathComponent("private/reports").path
        try PrivateFile.prepareDirectory(private_, mode: 0o600)
        #expect(try Self.mode(private_) == 0o700)
        let shared = directory.appendingPathComponent("shared").path
        try PrivateFile.prepareDirectory(shared, mode: 0o644)
        #expect(try Self.mode(shared) == 0o755)
    }

    @Test("file names: the watch's name, else its address without colons")
    func fileNames() {
        var named = GatewayConfiguration.WatchEntry(address: WatchID("AA:BB:CC:DD:EE:01")!, name: "guest room")
        #expect(ReportWriter.fileName(for: named) == "sleep-guest-room.html")
        named.name = nil
        #expect(ReportWriter.fileName(for: named) == "sleep-AABBCCDDEE01.html")
    }
}

@Suite("tsgateway serve writes sleep reports", .serialized, .timeLimit(.minutes(3)))
struct DaemonReportTests {
    /// The dates of the night hypnograms in a page, and the range its title states.
    static func nights(inPage page: String) throws -> (dates: Set<String>, first: String, last: String) {
        let dates = page.components(separatedBy: "class=\"chart hypnogram night\"").dropFirst().compactMap { chunk -> String? in
            guard let start = chunk.range(of: "data-date=\"") else { return nil }
            return String(chunk[start.upperBound...].prefix(10))
        }
        let title = try #require(page.range(of: "<title>Sleep of ").map { page[$0.upperBound...].prefix(while: { $0 != "<" }) })
        let words = title.split(separator: " ")
        return (Set(dates), String(words[words.count - 3]), String(words[words.count - 1]))
    }

    @Test("each watch's report appears after the first sync, 0600 in a directory made 0700, with the nights the daemon serves")
    func privateReport() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true\nname: bedroom"], extraConfig: "")
        let reports = daemon.directory.appendingPathComponent("reports/sleep")
        try Self.rewrite(daemon, report: "report:\n  directory: \(reports.path)\n  days: 14\n  every: 1m")
        try await daemon.start()
        let path = reports.appendingPathComponent("sleep-bedroom.html").path
        #expect(try await eventually(timeout: .seconds(90)) {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains("class=\"chart hypnogram night\"")
        }, "no report with nights at \(path); daemon log:\n\(daemon.log())")
        let page = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try ReportWriterTests.mode(path) == 0o600)
        #expect(try ReportWriterTests.mode(reports.path) == 0o700)
        #expect(page.contains("Watch <strong>bedroom (00:00:5E:00:54:01)</strong>") && page.contains("Times in <strong>\(TimeZone(identifier: "UTC")!.identifier)</strong>"))

        // The same nights as the daemon's DailySleep gives the CLI for the page's range.
        let (shown, first, last) = try Self.nights(inPage: page)
        let json = try await daemon.cli(["sleep", "show", "--last", "16d", "--json", "--tz", "UTC"])
        #expect(json.status == 0, "\(json.stderr)")
        struct Report: Decodable { struct Day: Decodable { var date: String; var nightSleeps: [AnyDecodable] }; var days: [Day] }
        struct AnyDecodable: Decodable { init(from decoder: any Decoder) throws {} }
        let served = try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8)).days
            .filter { !$0.nightSleeps.isEmpty && $0.date >= first && $0.date <= last }.map(\.date)
        #expect(shown == Set(served) && shown.count >= 7, "page \(first)…\(last): \(shown.sorted()), daemon: \(served)")
        #expect(try ReportWriterTests.leftovers(reports).isEmpty)
        await daemon.cleanUp()
    }

    @Test("mode 0644 in the configuration: the file and the directory made for it are readable by everyone")
    func sharedReport() async throws {
        let daemon = try DaemonProcess(watches: ["simulated: true"], extraConfig: "")
        let reports = daemon.directory.appendingPathComponent("www")
        try Self.rewrite(daemon, report: "report:\n  directory: \(reports.path)\n  mode: 0644")
        try await daemon.start()
        let path = reports.appendingPathComponent("sleep-00005E005401.html").path
        #expect(try await eventually(timeout: .seconds(90)) { FileManager.default.fileExists(atPath: path) }, "daemon log:\n\(daemon.log())")
        #expect(try ReportWriterTests.mode(path) == 0o644)
        #expect(try ReportWriterTests.mode(reports.path) == 0o755)
        await daemon.cleanUp()
    }

    /// Adds a `report:` section to the daemon's configuration file.
    static func rewrite(_ daemon: DaemonProcess, report: String) throws {
        let text = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try Data((report + "\n" + text).utf8).write(to: URL(fileURLWithPath: daemon.configPath))
    }
}
