import Foundation
import Testing

/// docs/architecture.md calls its module table the project's only module map, with a row for
/// every target of Package.swift: this holds it to that. A target without a row and a row that
/// names no target both fail, each by name.
@Suite struct ArchitectureMapTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every target of Package.swift has a row in docs/architecture.md's module table, and every row names a target")
    func theModuleTableIsTheTargetList() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let map = try String(contentsOf: Self.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let targets = PackageManifestText.mappedTargets(manifest)
        let rows = ModuleTable.names(map)
        #expect(targets.count > 20, "Package.swift's targets were not found (\(targets.sorted()))")
        #expect(!rows.isEmpty, "docs/architecture.md's module table was not found")
        for missing in targets.subtracting(rows).sorted() {
            Issue.record("Package.swift's target \(missing) has no row in docs/architecture.md's module table (\"The layers, top to bottom\")")
        }
        for stale in rows.subtracting(targets).sorted() {
            Issue.record("docs/architecture.md's module table has a row for \(stale), which is no target of Package.swift")
        }
    }

    /// The CLI's dependencies in Package.swift are what its files import, and D-Bus is not among
    /// them: it reaches a running daemon through TSGatewayAPI's client and the clock's evidence
    /// through TSWatchService (issue 43: `ClockCheck` had built a bus connection itself).
    @Test("every module Package.swift gives the CLI is imported by one of its files, and TSDBus is none of them")
    func theCLIsDependenciesAreItsImports() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declaration = try #require(manifest.components(separatedBy: ".executableTarget(").dropFirst().first { $0.contains("name: \"tsgateway\",") })
        let list = try #require(declaration.components(separatedBy: "dependencies: [").dropFirst().first?.components(separatedBy: ".product(").first)
        let dependencies = Set(list.matches(of: /"([A-Za-z0-9_]+)"/).map { String($0.output.1) })
        #expect(dependencies.count > 10, "\(dependencies.sorted())")
        #expect(!dependencies.contains("TSDBus"))
        let folder = Self.root.appendingPathComponent("Sources/tsgateway")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var imported: Set<String> = []
        for file in files {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") where line.hasPrefix("import ") {
                imported.insert(String(line.dropFirst("import ".count)))
            }
        }
        #expect(!imported.contains("TSDBus"), "a file of the CLI imports TSDBus")
        for unused in dependencies.subtracting(imported).sorted() {
            Issue.record("Package.swift gives the tsgateway target \(unused), which none of its files imports")
        }
    }

    @Test("the manifest reader finds every kind of target, in any layout, and passes over comments and test targets")
    func theManifestReaderFindsTargets() {
        let manifest = """
            // .target(name: "Commented"),
            targets: [
                .target(name: "A"),
                .target(
                    name: "B", dependencies: ["A"], path: "Sources/Families/B/Codec"),
                .executableTarget(name: "c-tool", dependencies: ["B"]),
                .systemLibrary(name: "CLib", pkgConfig: "lib"),
                .testTarget(name: "ATests", dependencies: ["A"]),
            ]
            """
        #expect(PackageManifestText.mappedTargets(manifest) == ["A", "B", "c-tool", "CLib"])
    }

    @Test("the table reader takes every module a row's first cell names, and no path")
    func theTableReaderFindsRows() {
        let map = """
            ## The layers, top to bottom

            | module | one line | I/O |
            |---|---|---|
            | `A` | a `NotAModule` in the text | no |
            | `B`, `CLib` | two | yes |
            | `Support` (`Tests/Support`) | helpers | tests only |

            ## Other paths

            | path | what |
            |---|---|
            | `docs/` | not a module |
            """
        #expect(ModuleTable.names(map) == ["A", "B", "CLib", "Support"])
    }
}

/// The targets Package.swift declares that the module map covers: every kind but test targets.
enum PackageManifestText {
    static func mappedTargets(_ manifest: String) -> Set<String> {
        let code = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            .joined(separator: "\n")
        let declaration = /\.(target|executableTarget|systemLibrary|binaryTarget|plugin|macro|testTarget)\(\s*name:\s*"([^"]+)"/
        return Set(code.matches(of: declaration).filter { $0.output.1 != "testTarget" }.map { String($0.output.2) })
    }
}

/// The module table of docs/architecture.md: the first table under "The layers, top to bottom".
enum ModuleTable {
    static func names(_ map: String) -> Set<String> {
        var names: Set<String> = []
        var inSection = false, inTable = false
        for line in map.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                if inSection { break }
                inSection = line.hasPrefix("## The layers, top to bottom")
                continue
            }
            guard inSection else { continue }
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 2 else { continue }
            let first = cells[1].trimmingCharacters(in: .whitespaces)
            // The header row and the separator row.
            if !inTable { inTable = true; continue }
            if first.allSatisfy({ $0 == "-" || $0 == ":" }) { continue }
            for match in first.matches(of: /`([^`]+)`/) where !match.output.1.contains("/") {
                names.insert(String(match.output.1))
            }
        }
        return names
    }
}
