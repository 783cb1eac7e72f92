import ArgumentParser
import Foundation
import TSModels
import TSStore

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Show the watch's model, firmware, capabilities, battery and last sync.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print JSON: {watch, model, firmware, capabilities: {...}, battery: {level, state}, lastSync}.")
    var json = false

    struct Output: Encodable {
        var watch: String
        var model: String
        var firmware: String
        var capabilities: DeviceCapabilities
        var battery: BatteryStatus
        var lastSync: Date?
    }

    func run() async throws {
        let output = try await WatchAccessor.run(connection) { watch in
            let info = try await watch.info()
            let battery = try await watch.battery()
            let lastSync = try await watch.lastSync()
            return Output(watch: watch.watchId, model: info.model, firmware: info.firmware, capabilities: info.capabilities, battery: battery, lastSync: lastSync)
        }
        if json {
            try JSONOutput.printWithDates(output)
            return
        }
        let caps = output.capabilities
        print(TextTable.render([
            ["watch", output.watch],
            ["model", output.model],
            ["firmware", output.firmware],
            ["battery", "\(output.battery.level) % (\(output.battery.state.rawValue))"],
            ["alarms", caps.maxAlarms == 0 ? "none" : "up to \(caps.maxAlarms), labels ≤ \(caps.labelMaxBytes) bytes, remarks ≤ \(caps.remarkMaxBytes) bytes"],
            ["sleep rule", "\(caps.statisticsRule.rawValue)\(caps.supportsNaps ? ", naps" : "")\(caps.deletesSyncedRecords ? ", deletes synced records" : "")\(caps.supportsLiveSleep ? ", live stages" : "")"],
            ["monitors", caps.monitorTypes.map(\.name).joined(separator: ", ")],
            ["last sync", output.lastSync.map { $0.formatted(date: .abbreviated, time: .shortened) } ?? "never"],
        ]))
    }
}

struct TimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "time", abstract: "The watch's clock.", subcommands: [Sync.self])

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the watch's clock and time zone from this computer's.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let zone = TimeZone.current
            try await WatchAccessor.run(connection) { watch in try await watch.syncTime() }
            print("set the watch's clock to \(Date().formatted(date: .omitted, time: .standard)) \(zone.identifier)")
        }
    }
}

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the watches this gateway knows.")
    @Option(help: ArgumentHelp("The database file (default: $XDG_DATA_HOME/tsgateway/tsgateway.sqlite).", valueName: "path"))
    var db: String?
    @Flag(help: "Print JSON: [{id, name, model, firmware, firstSeen, lastSeen, lastSync}].")
    var json = false

    struct Entry: Encodable {
        var id: String
        var name: String?
        var model: String?
        var firmware: String?
        var firstSeen: Date
        var lastSeen: Date
        var lastSync: Date?
    }

    func run() async throws {
        let store: GatewayStore
        do { store = try GatewayStore(path: db ?? GatewayStore.defaultPath()) } catch { throw CLIFailure.from(error) }
        let entries = try await store.watches().map {
            Entry(id: $0.id, name: $0.name, model: $0.info?.model, firmware: $0.info?.firmware, firstSeen: $0.firstSeen, lastSeen: $0.lastSeen, lastSync: $0.lastSync)
        }
        if json {
            try JSONOutput.printWithDates(entries)
        } else if entries.isEmpty {
            print("no known watches; pair one with `tsgateway pair ADDRESS`, or try `tsgateway --simulate …`")
        } else {
            var rows = [["address", "name", "model", "last seen", "last sync"]]
            for entry in entries {
                rows.append([entry.id, entry.name ?? "", entry.model ?? "", entry.lastSeen.formatted(date: .abbreviated, time: .shortened),
                             entry.lastSync?.formatted(date: .abbreviated, time: .shortened) ?? "never"])
            }
            print(TextTable.render(rows))
        }
    }
}

extension JSONOutput {
    /// As `print`, with dates as ISO 8601 strings.
    static func printWithDates<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
