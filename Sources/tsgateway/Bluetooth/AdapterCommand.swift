import ArgumentParser
import Foundation
import TSBlueZ
import TSHCI
import TSModels

struct AdapterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapter", abstract: "The computer's Bluetooth adapters.", subcommands: [List.self, Power.self, Info.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List Bluetooth adapters with address and power state.")
        @Flag(help: "Print JSON: [{name, path, address, alias, powered, discovering}].")
        var json = false

        func run() async throws {
            let adapters = try await withBlueZ { try await $0.adapters() }
            if json { return try JSONOutput.print(adapters) }
            if adapters.isEmpty { throw CLIFailure(BlueZError.noAdapter(nil).description, status: .unavailable) }
            var rows = [["adapter", "address", "powered", "alias"]]
            for adapter in adapters { rows.append([adapter.name, adapter.address, adapter.powered ? "on" : "off", adapter.alias]) }
            print(TextTable.render(rows))
        }
    }

    struct Power: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch an adapter on or off.")
        @Argument(help: "on or off")
        var state: String
        @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
        var adapter: String?

        func validate() throws {
            guard ["on", "off"].contains(state) else { throw ValidationError("state must be on or off, got \"\(state)\"") }
        }

        func run() async throws {
            let name = try await withBlueZ { bluez in
                let found = try await bluez.adapter(adapter)
                try await bluez.setPowered(state == "on", adapter: found)
                return found.name
            }
            print("\(name) powered \(state)")
        }
    }
}

extension AdapterCommand {
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The controller: Bluetooth version, manufacturer, address, LE features.",
            discussion: """
                Asks the controller itself with read-only HCI commands (Read Local Version \
                Information, Read BD_ADDR, LE Read Local Supported Features); bluetoothd is not \
                disturbed. The LE features need CAP_NET_RAW (sudo, or sudo setcap cap_net_raw+ep \
                "$(command -v tsgateway)"); without it they are left out with a note.
                """)
        @Option(help: ArgumentHelp("The adapter.", valueName: "hciN"))
        var adapter = "hci0"
        @Flag(help: "Print JSON: {adapter, address, addressType, bluetoothVersion, hciVersion, manufacturer, manufacturerName, leFeatures, leFeatureMask, …}.")
        var json = false

        func validate() throws { _ = try adapterIndexOrUsage(adapter) }

        func run() throws {
            let info: ControllerInfo
            do { info = try Controller.info(adapter: adapter) } catch { throw CLIFailure(error.description, status: ExitStatus(error.category)) }
            if json { return try JSONOutput.print(info) }
            var rows = [
                ["adapter", info.adapter],
                ["address", "\(info.address) (\(info.addressType))"],
                ["Bluetooth version", "\(info.bluetoothVersion) (HCI \(info.hciVersion) revision \(info.hciRevision), LMP \(info.lmpVersion).\(info.lmpSubversion))"],
                ["manufacturer", "\(info.manufacturerName) (\(info.manufacturer))"],
            ]
            if let features = info.leFeatures {
                let wanted = ["Data Length Extension", "2M PHY", "Coded PHY", "Extended Advertising"]
                rows += wanted.map { [$0, features.contains($0) ? "yes" : "no"] }
                rows.append(["LE features", features.joined(separator: ", ")])
            } else {
                rows.append(["LE features", info.leFeaturesNote ?? "unknown"])
            }
            print(TextTable.render(rows))
        }
    }
}
