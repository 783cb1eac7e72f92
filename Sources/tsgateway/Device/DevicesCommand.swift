import ArgumentParser
import Foundation
import TSModels
import TSStore

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the watches this gateway knows.")
    @Option(help: ArgumentHelp("The database file (default: $XDG_DATA_HOME/tsgateway/tsgateway.sqlite).", valueName: "path"))
    var db: String?
    @Flag(help: "Print JSON: [{id, name, model, firmware, dialect, firstSeen, lastSeen, lastSync}].")
    var json = false

    struct Entry: Encodable {
        var id: WatchID
        var name: String?
        var model: String?
        var firmware: String?
        var dialect: Dialect?
        var firstSeen: Date
        var lastSeen: Date
        var lastSync: Date?
    }

    func run() async throws {
        let store: GatewayStore
        do { store = try GatewayStore(path: db ?? GatewayStore.defaultPath()) } catch { throw CLIFailure.from(error) }
        let entries = try await store.watches().map {
            Entry(id: $0.id, name: $0.name, model: $0.info?.model, firmware: $0.info?.firmware, dialect: $0.info?.spokenDialect,
                  firstSeen: $0.firstSeen, lastSeen: $0.lastSeen, lastSync: $0.lastSync)
        }
        if json {
            try JSONOutput.printWithDates(entries)
        } else if entries.isEmpty {
            print("no known watches; pair one with `tsgateway pair ADDRESS`, or try `tsgateway --simulate …`")
        } else {
            var rows = [["address", "name", "model", "dialect", "last seen", "last sync"]]
            for entry in entries {
                rows.append([entry.id.rawValue, entry.name ?? "", entry.model ?? "", entry.dialect?.rawValue ?? "", entry.lastSeen.formatted(date: .abbreviated, time: .shortened),
                             entry.lastSync?.formatted(date: .abbreviated, time: .shortened) ?? "never"])
            }
            print(TextTable.render(rows))
        }
    }
}
