import ArgumentParser
import Foundation
import Logging
import TSBlueZ
import TSDevice
import TSFamilies
import TSFamilyKit
import TSGatewayService
import TSModels
import TSStore
import TSWatchService

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a watch, trust it and make it the default for later commands.",
        discussion: """
            Find the address with `tsgateway scan`. Pairing uses Just Works (no PIN), unless the watch shows \
            a passkey (a Garmin watch in its "pair phone" screen shows six digits): then pair asks for it and \
            reads it from standard input, or takes it as --passkey. A TopStep NPK watch \
            (--dialect npk) is then asked to bind the gateway, with the code it shows as a QR code when \
            given (--auth-code); the wearer may have to confirm on the watch. A bind declined there exits 77, \
            one nobody confirmed in time 75. A Huami band (--dialect huami) takes its 16-byte auth key \
            (--auth-key, 32 hex digits) on every connect: it is kept beside the database, readable by you \
            only, and never printed; a key the band refuses exits 77.

            Any dialect's secret can be given as --credential NAME=VALUE, by the name its dialect gives \
            it (listed with the option below), and is checked by that dialect's rule before Bluetooth is \
            touched; --auth-code CODE is --credential auth-code=CODE, --auth-key HEX is --credential \
            auth-key=HEX.

            Examples:
              tsgateway pair AA:BB:CC:DD:EE:FF
              tsgateway pair AA:BB:CC:DD:EE:FF --dialect npk --credential auth-code=CODE
              tsgateway pair AA:BB:CC:DD:EE:FF --passkey 123456
            """)
    @Argument(help: "The watch's Bluetooth address, AA:BB:CC:DD:EE:FF.", transform: WatchAddressArgument.parse)
    var address: WatchID
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?
    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var db: String?
    @Option(help: ArgumentHelp("The dialect the watch speaks, when its GATT services do not tell (\(DialectChoice.list)).", valueName: "dialect"),
            transform: DialectChoice.parse)
    var dialect: Dialect?
    @Option(help: ArgumentHelp(PairingSecretOptions.help("auth-code"), valueName: "code"))
    var authCode: String?
    @Option(help: ArgumentHelp(PairingSecretOptions.help("auth-key"), valueName: "hex"))
    var authKey: String?
    @Option(name: .customLong("credential"), help: ArgumentHelp(PairingSecretOptions.credentialHelp, valueName: "name=value"))
    var credentials: [String] = []
    @Option(help: ArgumentHelp("The passkey the watch shows while pairing (six digits), for scripts; without it, pair asks for it when the watch shows one.",
                               valueName: "digits"))
    var passkey: String?
    @Flag(name: [.short, .long], help: "Log what happens to standard error: each step of pairing and connecting, what was written to the watch, and each notification that arrived and which waiting request took it (never the secret).")
    var verbose: Int

    /// The pairing secrets given, by their key and as they were typed (for errors, never with
    /// the value); the coordinator of `--dialect` says which it takes.
    func secretsGiven() throws -> [PairingSecretOptions.Given] {
        let named = [("auth-code", authCode), ("auth-key", authKey)].compactMap { key, text in
            text.map { PairingSecretOptions.Given(key: key, text: $0, option: "--\(key)") }
        }
        return try named + credentials.map(PairingSecretOptions.parse)
    }

    func validate() throws {
        _ = try pairingSecret()
        _ = try givenPasskey()
    }

    /// `--passkey`, checked: one to six digits.
    func givenPasskey() throws -> UInt32? {
        guard let passkey else { return nil }
        guard let value = PasskeyPrompt.parse(passkey) else {
            throw ValidationError("--passkey takes the six digits the watch shows (000000 to 999999), not \"\(passkey)\"")
        }
        return value
    }

    /// The secret given for the dialect asked for, checked by that dialect's coordinator.
    func pairingSecret() throws -> PairingSecret? {
        let secrets = try secretsGiven()
        guard let given = secrets.first else { return nil }
        guard secrets.count == 1 else {
            throw ValidationError("a watch takes one pairing secret; \(secrets.map(\.option).joined(separator: " and ")) were given: keep the one its dialect takes")
        }
        let dialects = WatchFamilies.dialectTerms
        if let misplaced = DialectTerms.misplaced(key: given.key, for: dialect, among: dialects, option: { "--dialect \($0)" }) {
            throw ValidationError(String(given.option.dropLast(given.key.count)) + misplaced)
        }
        guard let credential = dialects.first(where: { $0.name == dialect })?.credential else { return nil }
        switch credential.secret(given.text) {
        case let .success(secret): return secret
        case let .failure(error): throw ValidationError("\(given.option): \(error.problem)")
        }
    }

    /// Pairing: a dialect that binds (NPK) binds now, with the code, and says when the wearer may
    /// have to confirm on the watch. With `-v`, the central's traffic goes to `logger`.
    func pairingConfiguration(logger: Logger) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.pairing = true
        configuration.pairingSecret = try? pairingSecret()
        configuration.confirmationNeeded = { advice in FileHandle.standardError.write(Data("tsgateway: \(advice)\n".utf8)) }
        configuration.traffic = Logging.traffic(to: logger)
        return configuration
    }

    func run() async throws {
        let id = address
        let logger = Logging.logger("tsgateway", verbose: verbose, quiet: .warning)
        let store: GatewayStore
        do { store = try GatewayStore(path: db ?? GatewayStore.defaultPath()) } catch { throw CLIFailure.from(error) }
        let info = try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            let device = try await bluez.discover(address: id.rawValue, adapter: found)
            PhaseLog.log("found \(id) on \(found.name)", to: logger)
            // Its own pairing's agent: Just Works, or the passkey the watch shows typed in. Not the
            // default agent: a pairing the watch's side answers is the watch's business.
            let prompt = PasskeyPrompt(given: try givenPasskey())
            try await bluez.registerAgent(PairingAgent(capability: .keyboardDisplay, passkey: { _ in try await prompt.passkey() }, isDefault: false))
            do {
                try await bluez.pair(device)
            } catch {
                if let failure = prompt.failure { throw CLIFailure("could not pair with \(id): \(failure)", status: .usage) }
                throw error
            }
            PhaseLog.log("paired", to: logger)
            try await bluez.trust(device)
            PhaseLog.log("trusted", to: logger)
            do {
                // A pair learns the dialect afresh (what was remembered may be what went wrong); the store remembers it.
                let link = BluetoothLink(adapter: found.name, address: id)
                let resolved = try await WatchOpener.resolveDialect(for: link, bluez: bluez, asked: dialect, remembered: nil,
                                                                         among: WatchFamilies.dialects)
                logger.info("speaking \(resolved.dialect.name) (\(resolved.reason.rawValue))")
                let watch = WatchOpener.open(.bluetooth(link, bluez: bluez), dialect: resolved.dialect,
                                             configuration: pairingConfiguration(logger: logger)) { step in PhaseLog.log(step.rawValue, to: logger) }.central
                let info = try await watch.connect()
                await watch.disconnect()
                return info
            } catch {
                throw CLIFailure.from(error)
            }
        }
        try await store.saveWatch(id: id, name: nil, info: info)
        if let secret = try pairingSecret(), (try? WatchFamilies.dialect(named: info.spokenDialect))?.credential?.neededOnEveryConnect == true {
            do { try RememberedSecrets.save(secret, watch: id, databasePath: store.path) } catch { throw CLIFailure.from(error) }
        }
        // A watch with standard services only may name no firmware.
        let firmware = info.firmware.isEmpty ? "" : ", firmware \(info.firmware)"
        print("paired with \(info.model) (\(id))\(firmware), speaking \(info.spokenDialect); it is now the default watch")
    }
}

/// A pairing secret's options: `--auth-code`, `--auth-key`, and `--credential NAME=VALUE` for
/// any dialect's, each checked by the registration of the dialect that takes it.
enum PairingSecretOptions {
    /// A secret as given: its key, its text (never printed: it describes itself by its option)
    /// and how it was typed, for errors.
    struct Given: CustomStringConvertible {
        var key: String
        var text: String
        /// `--auth-code`, `--credential auth-code`.
        var option: String

        var description: String { option }
    }

    static func help(_ key: String) -> String {
        let takers = WatchFamilies.dialects.filter { $0.credential?.key == key }
        guard let meaning = takers.first?.credential?.meaning else { return "A pairing secret no dialect of this build takes." }
        return "\(meaning.prefix(1).uppercased() + meaning.dropFirst()) (with " + takers.map { "--dialect \($0.name)" }.joined(separator: " or ") + ")."
    }

    static var credentialHelp: String {
        "A dialect's pairing secret by its name, e.g. auth-code=CODE, checked by that dialect's rule; this build's dialects take \(takenNames)."
    }

    /// The secrets this build's dialects take, with the dialects: "auth-code (--dialect npk), auth-key (--dialect huami)".
    static var takenNames: String {
        let dialects = WatchFamilies.dialects
        var keys: [String] = []
        for key in dialects.compactMap(\.credential?.key) where !keys.contains(key) { keys.append(key) }
        guard !keys.isEmpty else { return "none" }
        return keys.map { key in
            "\(key) (" + dialects.filter { $0.credential?.key == key }.map { "--dialect \($0.name)" }.joined(separator: " or ") + ")"
        }.joined(separator: ", ")
    }

    /// `--credential NAME=VALUE`: a name some dialect of this build takes, and its value. The
    /// value is never part of an error: what was typed may be the secret itself.
    static func parse(_ argument: String) throws -> Given {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw ValidationError("--credential takes NAME=VALUE, e.g. --credential auth-code=CODE; this build's dialects take \(takenNames)")
        }
        let key = String(argument[..<equals])
        guard WatchFamilies.dialects.contains(where: { $0.credential?.key == key }) else {
            throw ValidationError("--credential \(key): no dialect this build speaks takes a secret of that name; they take \(takenNames)")
        }
        return Given(key: key, text: String(argument[argument.index(after: equals)...]), option: "--credential \(key)")
    }
}

struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unpair", abstract: "Forget a watch's Bluetooth bond (its synced data stays in the database).")
    @Argument(help: "The watch's Bluetooth address, AA:BB:CC:DD:EE:FF.", transform: WatchAddressArgument.parse)
    var address: WatchID
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?

    func run() async throws {
        try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            try await bluez.remove(try await bluez.device(address: address.rawValue, adapter: found), adapter: found)
        }
        print("unpaired \(address)")
    }
}
