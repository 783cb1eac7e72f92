import Foundation
import Testing

/// A family is a folder (issue 43): every module under `Sources/Families/<Name>/` is that family's,
/// and none of them imports another family's module, protocol v1's (`Sources/Families/V1`: its
/// codec `TSProtocol`, its simulator `TSSimulator`) included; the shared parts are the modules
/// outside `Sources/Families`.
@Suite struct FamilyFolderTests {
    static let root = ArchitectureMapTests.root

    /// Each target whose `path:` is under `Sources/Families/<Name>/`, by its family folder.
    static func familyModules(_ manifest: String) -> [String: Set<String>] {
        var families: [String: Set<String>] = [:]
        let declarations = manifest.components(separatedBy: ".target(").dropFirst()
        for declaration in declarations {
            let own = declaration.components(separatedBy: ".testTarget(")[0]
            guard let name = own.firstMatch(of: /name: "([A-Za-z0-9_-]+)"/)?.output.1,
                  let folder = own.firstMatch(of: /path: "Sources\/Families\/([A-Za-z0-9]+)\//)?.output.1 else { continue }
            families[String(folder), default: []].insert(String(name))
        }
        return families
    }

    @Test("the manifest reader gives each family folder its modules, whatever their dependencies hold")
    func theReaderFindsEachFamilysModules() {
        let manifest = """
            .target(name: "TSA", dependencies: [.product(name: "P", package: "p")], path: "Sources/Families/A/Codec"),
            .target(name: "TSShared", dependencies: ["TSA"]),
            .target(name: "TSAWatch",
                    dependencies: ["TSA"],
                    path: "Sources/Families/A/Central"),
            .target(name: "TSB", path: "Sources/Families/B/Codec"),
            .testTarget(name: "TSBTests", dependencies: ["TSB"], path: "Tests/Families/B/CodecTests"),
            """
        #expect(Self.familyModules(manifest) == ["A": ["TSA", "TSAWatch"], "B": ["TSB"]])
    }

    @Test("no module of one family, and none of its tests, imports another family's module or protocol v1's")
    func noFamilyImportsAnothers() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let families = Self.familyModules(manifest)
        #expect(Set(families.keys).isSuperset(of: ["Npk", "QRing", "Huami", "V1"]), "\(families.keys.sorted())")
        #expect(families["V1"]?.isSuperset(of: ["TSProtocol", "TSSimulator"]) == true, "protocol v1's codec and simulator are in its folder")
        let folders = Self.root.appendingPathComponent("Sources/Families")
        for (family, own) in families.sorted(by: { $0.key < $1.key }) {
            let forbidden = families.filter { $0.key != family }.values.reduce(into: Set<String>()) { $0.formUnion($1) }.subtracting(own)
            let folder = folders.appendingPathComponent(family)
            // Its tests too: Tests/Families/<Name> holds its codec's, central's and simulator's.
            let testFolder = Self.root.appendingPathComponent("Tests/Families").appendingPathComponent(family)
            let files = [folder, testFolder].flatMap { folder in
                FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            }
            #expect(!files.isEmpty, "\(family) has no Swift files under \(folder.path)")
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    let module = String(line.split(separator: " ").last ?? "")
                    if forbidden.contains(module) {
                        Issue.record("\(file.path.replacingOccurrences(of: Self.root.path + "/", with: "")) (family \(family)) imports \(module)")
                    }
                }
            }
        }
    }

    /// The seam and what lies under it: a family plugs into these, so none of them may know one.
    static let sharedBelowTheRegistry = ["TSModels", "TSGATT", "TSSnoop", "TSTransport", "TSSleep", "TSStore", "TSDevice", "TSBlueZTransport",
                                         "TSWatchService", "TSSimulatedHistory", "TSSimulatorPeripheral"]

    @Test("the dialect seam (TSDevice) and the shared modules under the registry import no family's module, protocol v1's included")
    func theSeamKnowsNoFamily() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let familyModules = Self.familyModules(manifest).values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(familyModules.isSuperset(of: ["TSProtocol", "TSProtocolV1Watch", "TSHuamiWatch"]), "\(familyModules.sorted())")
        for module in Self.sharedBelowTheRegistry {
            let folder = Self.root.appendingPathComponent("Sources").appendingPathComponent(module)
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
                .filter { $0.pathExtension == "swift" } ?? []
            #expect(!files.isEmpty, "\(module) has no Swift files under \(folder.path)")
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    let imported = String(line.split(separator: " ").last ?? "")
                    if familyModules.contains(imported) { Issue.record("\(module): \(file.lastPathComponent) imports \(imported)") }
                }
            }
            // Its manifest entry names none either.
            guard let entry = manifest.components(separatedBy: ".target(").dropFirst()
                .first(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("name: \"\(module)\"") }) else {
                Issue.record("\(module) has no target in Package.swift")
                continue
            }
            let own = entry.components(separatedBy: ".testTarget(")[0]
            for dependency in own.matches(of: /"([A-Za-z0-9_]+)"/).map({ String($0.output.1) }) where familyModules.contains(dependency) {
                Issue.record("Package.swift gives \(module) the family module \(dependency)")
            }
        }
    }
}
