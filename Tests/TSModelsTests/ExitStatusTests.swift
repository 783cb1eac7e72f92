import Foundation
import TSModels
import Testing

@Suite("exit statuses")
struct ExitStatusTests {
    @Test("an error without a category exits 1 through either door: as itself, and as org.tsgateway.Error.Failed from the daemon")
    func uncategorised() throws {
        struct Plain: Error {}
        #expect(ExitStatus.of(Plain()) == .failure)
        #expect(ExitStatus.of(Plain()).rawValue == 1)
        let throughDaemon = try #require(ErrorCategory(rawValue: "Failed"))
        #expect(ExitStatus(throughDaemon) == ExitStatus.of(Plain()))
        #expect(ExitStatus.of(CategorizedFailure(throughDaemon, "boom")) == .failure)
        #expect(ExitStatus.of(CancellationError()) == .failure)
        #expect(ExitStatus.of(CategorizedFailure(.timeout, "late")) == .timeout)
    }

    @Test("every category's status is the table's, and README's \"Exit codes\" lists exactly the table")
    func readmeTable() throws {
        for category in ErrorCategory.allCases {
            #expect(ExitStatus(rawValue: category.exitStatus) == ExitStatus(category))
        }
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "### Exit codes").dropFirst().first)
        let codes = section.split(separator: "\n").prefix { !$0.hasPrefix("#") }.compactMap { line -> Int32? in
            guard line.hasPrefix("| ") else { return nil }
            return Int32(line.dropFirst(2).prefix { $0.isNumber })
        }
        #expect(codes == ExitStatus.allCases.map(\.rawValue))
    }
}
