import ArgumentParser
import Foundation
import TSBlueZ
import TSDevice
import TSModels
import TSStore
import TSWatchService

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a watch, trust it and make it the default for later commands.",
        discussion: """
            Find the address with `tsgateway scan`. Pairing uses Just Works (no PIN). A TopStep NPK watch \
            (--dialect npk) is then asked to bind the gateway, with the code it shows as a QR code when \
            given (--auth-code); the wearer may have to confirm on the watch. A bind declined there exits 77, \
            one nobody confirmed in time 75.
            """)
    @Argument(help: "The watch's Bluetooth address, AA:BB:CC:DD:EE:FF.")
    var address: String
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?
    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var db: String?
    @Option(help: ArgumentHelp("The dialect the watch speaks, when its GATT services do not tell (\(DialectChoice.list)).", valueName: "dialect"),
            transform: DialectChoice.parse)
    var dialect: Dialect?
    @Option(help: ArgumentHelp("The code a TopStep NPK watch shows as a QR code for pairing (with --dialect npk).", valueName: "code"))
    var authCode: String?

    func validate() throws {
        guard WatchID(address) != nil else {
            throw ValidationError("\"\(address)\" is not a Bluetooth address such as AA:BB:CC:DD:EE:FF")
        }
        if let authCode {
            guard dialect == .npk else { throw ValidationError("--auth-code is for a TopStep NPK watch; add --dialect npk") }
            if let problem = AuthCode.problem(authCode) { throw ValidationError("--auth-code: \(problem)") }
        }
    }

    /// Pairing: a dialect that binds (NPK) binds now, with the code, and says when the wearer may
    /// have to confirm on the watch.
    var pairingConfiguration: WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.pairing = true
        configuration.authCode = authCode.flatMap(AuthCode.init)
        configuration.confirmationNeeded = { advice in FileHandle.standardError.write(Data("tsgateway: \(advice)\n".utf8)) }
        return configuration
    }

    func run() async throws {
        let store: GatewayStore
        do { store = try GatewayStore(path: db ?? GatewayStore.defaultPath()) } catch { throw CLIFailure.from(error) }
        let info = try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            let device = try await bluez.discover(address: address, adapter: found)
            try await bluez.registerAgent()
            try await bluez.pair(device)
            try await bluez.trust(device)
            do {
                // A pair learns the dialect afresh (what was remembered may be what went wrong); the store remembers it.
                let link = BluetoothLink(adapter: found.name, address: device.address)
                let resolved = try await WatchOpener.resolveDialect(for: link, bluez: bluez, asked: dialect, remembered: nil)
                let watch = try WatchOpener.open(.bluetooth(link, bluez: bluez), dialect: resolved.dialect.name,
                                                 configuration: pairingConfiguration).central
                let info = try await watch.connect()
                await watch.disconnect()
                return info
            } catch {
                throw CLIFailure.from(error)
            }
        }
        let id = WatchID(address)!  // validate() checked it
        try await store.saveWatch(id: id.rawValue, name: nil, info: info)
        // A watch with standard services only may name no firmware.
        let firmware = info.firmware.isEmpty ? "" : ", firmware \(info.firmware)"
        print("paired with \(info.model) (\(id))\(firmware), speaking \(info.spokenDialect); it is now the default watch")
    }
}

struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unpair", abstract: "Forget a watch's Bluetooth bond (its synced data stays in the database).")
    @Argument(help: "The watch's Bluetooth address.")
    var address: String
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?

    func run() async throws {
        try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            try await bluez.remove(try await bluez.device(address: address, adapter: found), adapter: found)
        }
        print("unpaired \(WatchID(address).map(\.rawValue) ?? address)")
    }
}
