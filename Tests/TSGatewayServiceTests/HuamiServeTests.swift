import Foundation
import Logging
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
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

    /// A log handler keeping the messages it is given.
    struct KeptLines: LogHandler {
        final class Lines: @unchecked Sendable {
            private let lock = NSLock()
            private var kept: [String] = []
            func add(_ line: String) { lock.withLock { kept.append(line) } }
            var all: [String] { lock.withLock { kept } }
        }

        let lines: Lines
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
            lines.add("\(message)")
        }
    }

    @Test("serve -vv logs each answer of the band and the request that took it; -v does not")
    func trafficWithVeryVerbose() async throws {
        for (level, logged) in [(Logger.Level.debug, true), (.info, false)] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huami-serve-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = try GatewayConfiguration.parse("watches:\n  - simulated: true\n    dialect: huami\n", file: "huami.yaml")
            configuration.database = directory.appendingPathComponent("db.sqlite").path
            let lines = KeptLines.Lines()
            let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "huami") { _ in KeptLines(lines: lines, logLevel: level) })
            let watch = try #require(try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database)).first?.watch)
            try await watch.connect()
            await watch.disconnect()
            #expect(lines.all.contains("watch: auth notification 10 83 01 → the auth answer") == logged, "\(level): \(lines.all.suffix(6))")
        }
    }
}
