import Foundation
import Synchronization
import TSDevice
import TSGATT
import TSModels
import TSNpkSimulator
import TSNpkWatch
import TSTransport
import TSWatchService
import TSSimulatedHistory
import Testing

/// Pairing an NPK watch in-process: a bind with the auth code, what the gateway sends in
/// `TSMetaAuthParam`, and the wearer's answer.
@Suite struct NpkPairingTests {
    /// What the central told the wearer.
    final class Prompts: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func pairingConfiguration(authCode: String?, prompts: Prompts = Prompts()) -> WatchConfiguration {
        var configuration = NpkRig.configuration
        configuration.pairing = true
        configuration.pairingSecret = authCode.flatMap { try? PairingCredential.npkAuthCode.secret($0).get() }
        configuration.confirmationNeeded = { prompts.add($0) }
        return configuration
    }

    @Test func pairingBindsEvenWhenBoundAndSendsTheAuthCode() async throws {
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.boundUserId = "tsgateway"
        let simulator = SimulatedNpkWatch(configuration: configuration, records: [])
        let prompts = Prompts()
        let watch = NpkWatch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)),
                             configuration: Self.pairingConfiguration(authCode: "QR-8842-ZX", prompts: prompts))
        try await watch.connect()
        await watch.disconnect()
        #expect(await simulator.statistics.binds == 1)
        #expect(await simulator.statistics.logins == 0, "pairing binds without a login first")
        let sent = try #require(await simulator.lastAuthParam)
        #expect(sent.userID == "tsgateway")
        #expect(sent.system == 1 && sent.version == "1" && sent.brand == "tsgateway" && sent.model == "gateway")
        #expect(sent.authCode == "QR-8842-ZX")
        #expect(!sent.hasUser, "no body measurements")
        #expect(sent.time.zoneOffset == Int32(NpkRig.zone.secondsFromGMT(for: NpkRig.now)))
        #expect(prompts.all == ["if the watch asks, confirm the pairing on it (waiting up to 30 s)"])
    }

    @Test func aLoginNeedsNoConfirmationAndABindAfterARefusedLoginCarriesTheCode() async throws {
        let simulator = SimulatedNpkWatch(records: [])
        let prompts = Prompts()
        var configuration = NpkRig.configuration
        configuration.pairingSecret = PairingSecret(key: "auth-code", text: "771204")
        configuration.confirmationNeeded = { prompts.add($0) }
        let watch = NpkWatch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)), configuration: configuration)
        try await watch.connect()
        let first = await simulator.statistics
        #expect(first.logins == 1 && first.binds == 1, "bound to nobody: the login is refused, then a bind")
        #expect(await simulator.lastAuthParam?.authCode == "771204")
        #expect(prompts.all.count == 1)
        await watch.disconnect()
        try await watch.connect()
        await watch.disconnect()
        let second = await simulator.statistics
        #expect(second.logins == 2 && second.binds == 1)
        #expect(prompts.all.count == 1, "a login asks the wearer nothing")
    }

    @Test(arguments: [(SimulatedWearer.decline, ErrorCategory.permission), (.ignore, .timeout)])
    func aBindTheWearerDoesNotConfirmFailsTheConnect(wearer: SimulatedWearer, category: ErrorCategory) async throws {
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.bindAnswer = wearer.bindAnswer
        let simulator = SimulatedNpkWatch(configuration: configuration, records: [])
        let watch = NpkWatch(transport: LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(247)),
                             configuration: Self.pairingConfiguration(authCode: "123456"))
        let error = await #expect(throws: NpkAuthError.self) { try await watch.connect() }
        #expect(error?.category == category)
        #expect(error?.description.contains("on the watch") == true)
        #expect(await watch.isConnected == false)
        #expect(await simulator.boundUserId == nil)
    }

    @Test(arguments: ["", "two words", String(repeating: "x", count: 129), "tab\there"])
    func anAuthCodeThatCannotBeOneIsRefusedWithWhy(text: String) {
        #expect(AuthCode(text) == nil)
        #expect(AuthCode.problem(text) != nil)
    }
}
