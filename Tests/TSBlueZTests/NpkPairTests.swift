import Foundation
import TSDevice
import TSModels
import TSNpk
import TSNpkSimulator
import TSTestSupport
import TSSimulatedHistory
import Testing

/// `tsgateway pair --dialect npk --auth-code CODE` against the simulated NPK watch behind a fake
/// bluetoothd: the BlueZ pairing, then a bind with the code, which the wearer may decline.
@Suite struct NpkPairTests {
    static let address = "aa:bb:cc:dd:ee:09"

    static func simulator(_ wearer: SimulatedWearer) -> SimulatedNpkWatch {
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.bindAnswer = wearer.bindAnswer
        return SimulatedNpkWatch(configuration: configuration, records: [])
    }

    @Test func pairBindsWithTheAuthCodeAndLaterCommandsLogIn() async throws {
        _ = try CLI.requireBinary()
        let simulator = Self.simulator(.confirm)
        let fake = try await BridgedWatch(simulator: simulator, mtu: 247, profile: .npk); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-npkpair-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let db = home.appendingPathComponent("db.sqlite").path
        let environment = ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address]

        let paired = try await CLI.runOnceDetached(["pair", Self.address, "--dialect", "npk", "--auth-code", "TS7Q-4K9Z", "--db", db], environment: environment)
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(paired.stdout == "paired with NPK Simulator (AA:BB:CC:DD:EE:09), firmware 1.0.0-sim, speaking npk; it is now the default watch\n")
        #expect(paired.stderr.contains("if the watch asks, confirm the pairing on it (waiting up to 30 s)"), "\(paired.stderr)")
        #expect(fake.flag("Paired") && fake.flag("Trusted"), "the Bluetooth bond first")
        #expect(await simulator.statistics.binds == 1, "pairing binds at once")
        #expect(await simulator.statistics.logins == 0)
        let sent = try #require(await simulator.lastAuthParam)
        #expect(sent.authCode == "TS7Q-4K9Z")
        #expect(sent.userID == "tsgateway" && sent.system == 1 && sent.brand == "tsgateway" && sent.model == "gateway")
        #expect(await simulator.boundUserId == "tsgateway")

        // No --dialect: the store remembers what pair learned (NPK's service would not tell).
        let info = try await CLI.runOnceDetached(["info", "--json", "-v", "--db", db], environment: environment)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stderr.contains("speaking npk (remembered)"), "\(info.stderr)")
        #expect(info.stdout.contains(#""dialect" : "npk""#), "\(info.stdout)")
        #expect(await simulator.statistics.logins == 1, "bound now: a login")
        #expect(await simulator.statistics.binds == 1)
    }

    @Test(arguments: [(SimulatedWearer.decline, Int32(77), "the wearer declined the pairing on the watch; pair again and accept it there"),
                      (.ignore, 75, "nobody confirmed the pairing on the watch in time; pair again and confirm it on the watch")])
    func aBindTheWearerDeclinesOrLeavesUnansweredSaysSo(wearer: SimulatedWearer, status: Int32, message: String) async throws {
        _ = try CLI.requireBinary()
        let simulator = Self.simulator(wearer)
        let fake = try await BridgedWatch(simulator: simulator, mtu: 247, profile: .npk); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-npkpair-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let db = home.appendingPathComponent("db.sqlite").path
        let result = try await CLI.runOnceDetached(["pair", Self.address, "--dialect", "npk", "--auth-code", "123456", "--db", db],
                                                   environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(await simulator.boundUserId == nil)
        #expect(await simulator.statistics.binds == 1)
    }
}
