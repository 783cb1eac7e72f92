import Foundation
import Logging
import Testing
import TSDevice
import TSFamilies
@testable import TSGatewayService
import TSModels
import TSStore
import TSWatchService

/// `tsgateway serve` with a Huami band in its configuration: the auth key through the family's
/// credential (`auth-key:`), checked by its rule and never printed, and a simulated band held by a supervisor.
@Suite("serve with a Huami band", .serialized, .timeLimit(.minutes(2)))
struct HuamiServeTests {
    static let key = "00112233445566778899aabbccddeeff"

    @Test("auth-key: is taken for a huami watch, checked, given to its central, and never printed")
    func configuration() throws {
        let parsed = try GatewayConfiguration.parse("watches:\n  - address: AA:BB:CC:DD:EE:07\n    dialect: huami\n    auth-key: \"\(Self.key)\"\n", file: "huami.yaml")
        #expect(parsed.watches[0].pairingSecret == PairingSecret(key: "auth-key", text: Self.key))
        #expect(WatchSupervisor.watchConfiguration(parsed, entry: parsed.watches[0]).pairingSecret?.text == Self.key)
        #expect(!String(describing: parsed.watches[0]).contains(Self.key), "a key never prints itself")
        let cases = [
            ("watches:\n  - address: AA:BB:CC:DD:EE:07\n    dialect: huami\n    auth-key: \"0011\"\n", "auth-key: an auth key is 32 hex digits"),
            ("watches:\n  - address: AA:BB:CC:DD:EE:07\n    auth-key: \"\(Self.key)\"\n", "add `dialect: huami`"),
        ]
        for (text, message) in cases {
            let error = try #require(throws: ConfigurationError.self) { try GatewayConfiguration.parse(text, file: "huami.yaml") }
            #expect(String(describing: error).contains(message), "\(error)")
            #expect(!String(describing: error).contains(Self.key))
        }
    }

    @Test("a band configured without auth-key: connects with the key `pair` kept beside the database, which `serve --check` then accepts")
    func rememberedKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huami-remembered-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("service/db.sqlite").path
        let parsed = try GatewayConfiguration.parse("database: \(database)\nwatches:\n  - address: AA:BB:CC:DD:EE:07\n    dialect: huami\n", file: "huami.yaml")
        #expect(WatchSupervisor.watchConfiguration(parsed, entry: parsed.watches[0]).pairingSecret == nil)
        #expect(parsed.watchesWithoutTheirSecret().count == 1)
        try RememberedSecrets.save(PairingSecret(key: "auth-key", text: Self.key), watch: parsed.watches[0].address, databasePath: database)
        #expect(WatchSupervisor.watchConfiguration(parsed, entry: parsed.watches[0]).pairingSecret?.text == Self.key)
        #expect(parsed.watchesWithoutTheirSecret().isEmpty)
    }

    @Test("serve makes a supervisor for a simulated band, which connects with the band's key and reads its alarms")
    func serve() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huami-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try GatewayConfiguration.parse("watches:\n  - simulated: true\n    dialect: huami\n", file: "huami.yaml")
        configuration.database = directory.appendingPathComponent("db.sqlite").path
        let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "huami"))
        let supervisors = try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database))
        let watch = try #require(supervisors.first?.watch)
        #expect(watch.dialect == .huami)
        #expect(try await watch.connect().model == "Mi Smart Band 5")
        #expect(try await watch.alarms().count == 1, "the simulated watch's default alarm, without its label")
        await watch.disconnect()
    }
}
