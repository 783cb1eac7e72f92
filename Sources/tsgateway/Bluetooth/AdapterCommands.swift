import ArgumentParser
import Foundation
import TSBlueZ
import TSHCI
import TSDevice

/// Runs a BlueZ operation, turning its errors into CLI failures.
func withBlueZ<T>(_ body: (BlueZ) async throws -> T) async throws -> T {
    let bluez: BlueZ
    do { bluez = try BlueZ.connect() } catch { throw CLIFailure.from(error) }
    defer { bluez.bus.close() }
    do {
        return try await body(bluez)
    } catch {
        throw CLIFailure.from(error)
    }
}

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

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Look for nearby watches (devices advertising the watch service).",
        discussion: "Prints each watch as it is found, with name, address and signal strength. --all shows every LE device.")
    @Option(help: "Seconds to scan.")
    var timeout: Int = 10
    @Flag(help: "Show every LE device, not only watches.")
    var all = false
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?
    @Flag(help: "Print one JSON object per line: {address, name, rssi, uuids, paired, dialects}; dialects: those whose service the device advertises.")
    var json = false

    func validate() throws {
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1…600 seconds, got \(timeout)") }
    }

    func run() async throws {
        try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            let devices = try await bluez.scan(adapter: found, serviceUUIDs: all ? [] : WatchDialects.all.compactMap { $0.gatt?.service.lowercased() }, duration: .seconds(timeout))
            if !json { print("scanning on \(found.name) for \(timeout) s…") }
            var seen = Set<String>()
            for await device in devices where seen.insert(device.address).inserted {
                if json {
                    struct Line: Encodable { var address: String; var name: String?; var rssi: Int?; var uuids: [String]; var paired: Bool; var dialects: [String] }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    print(String(decoding: try encoder.encode(Line(address: device.address, name: device.name, rssi: device.rssi, uuids: device.uuids, paired: device.paired,
                                                                                dialects: DialectResolution.serving(device.uuids).map(\.name.rawValue))), as: UTF8.self))
                } else {
                    let dialect = DialectResolution.hint(device.uuids).map { "  \($0)" } ?? ""
                    print("\(device.address)  \(device.rssi.map { "\($0) dBm" } ?? "–")  \(device.name ?? "(no name)")\(device.paired ? "  paired" : "")\(dialect)")
                }
                fflush(nil)
            }
            if !json && seen.isEmpty { print(all ? "no devices found" : "no watches found; is the watch awake and near? (--all shows every device)") }
        }
    }
}
