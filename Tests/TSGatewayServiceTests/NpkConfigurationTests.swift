import Foundation
import TSGatewayService
import TSModels
import Testing

/// `auth-code:` of an NPK watch in `tsgateway serve`'s configuration.
@Suite struct NpkConfigurationTests {
    @Test func anNpkWatchCarriesItsAuthCodeIntoItsCentralsConfiguration() throws {
        let configuration = try GatewayConfiguration.parse("""
            watches:
              - address: AA:BB:CC:DD:EE:01
                dialect: npk
                auth-code: "TS7Q-4K9Z"
              - address: AA:BB:CC:DD:EE:02
                dialect: npk
            """, file: "config.yaml")
        #expect(configuration.watches.map(\.pairingSecret) == [PairingSecret(key: "auth-code", text: "TS7Q-4K9Z"), nil])
        let central = WatchSupervisor.watchConfiguration(configuration, entry: configuration.watches[0])
        #expect(central.pairingSecret?.text == "TS7Q-4K9Z")
        #expect(central.pairing == false, "serve logs in, and binds only when the watch refuses the login")
    }

    @Test(arguments: [
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    auth-code: 123456", 3, "auth-code is for a TopStep NPK watch; add `dialect: npk`"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    dialect: v1\n    auth-code: 123456", 4, "auth-code is for a TopStep NPK watch; add `dialect: npk`"),
        ("watches:\n  - address: AA:BB:CC:DD:EE:FF\n    dialect: npk\n    auth-code: \"12 34\"", 4, "auth-code: the auth code holds a space"),
    ])
    func aBadAuthCodeNamesItsLine(text: String, line: Int, message: String) throws {
        let error = try #require(throws: ConfigurationError.self) { try GatewayConfiguration.parse(text, file: "config.yaml") }
        #expect(error.line == line, "\(error)")
        #expect(error.message.contains(message), "\(error)")
    }
}
