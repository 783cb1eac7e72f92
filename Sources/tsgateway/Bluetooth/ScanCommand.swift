import ArgumentParser
import Foundation
import TSBlueZ
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Look for nearby watches (devices advertising the watch service).",
        discussion: """
            Prints each watch as it is found, with name, address and signal strength. --all shows every LE device. \
            --count ends the scan once that many are found (--timeout still bounds it).

            Examples:
              tsgateway scan --count 1 --timeout 30 --json
            """)
    @Option(help: "Seconds to scan.")
    var timeout: Int = 10
    @Option(help: "Stop once this many devices are found (default: scan for the whole --timeout).")
    var count: Int?
    @Flag(help: "Show every LE device, not only watches.")
    var all = false
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?
    @Flag(help: "Print one JSON object per line: {address, name, rssi, uuids, paired, dialects, ambiguous}; dialects: those whose service the device advertises; ambiguous: that service does not tell which it speaks (`probe` asks the watch).")
    var json = false

    func validate() throws {
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1…600 seconds, got \(timeout)") }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more, got \(count)") }
    }

    func run() async throws {
        try await withBlueZ { bluez in
            let found = try await bluez.adapter(adapter)
            let devices = try await bluez.scan(adapter: found, serviceUUIDs: all ? [] : WatchFamilies.dialects.compactMap { $0.gatt?.service.lowercased() }, duration: .seconds(timeout))
            if !json { print("scanning on \(found.name) for \(timeout) s…") }
            var seen = Set<String>()
            for await device in devices where seen.insert(device.address).inserted {
                if json {
                    struct Line: Encodable { var address: String; var name: String?; var rssi: Int?; var uuids: [String]; var paired: Bool; var dialects: [String]; var ambiguous: Bool }
                    print(String(decoding: try JSONCoding.encoder().encode(Line(address: device.address, name: device.name, rssi: device.rssi, uuids: device.uuids, paired: device.paired,
                                                                                dialects: DialectResolution.serving(device.uuids, among: WatchFamilies.dialects).map(\.name.rawValue),
                                                                                ambiguous: DialectResolution.isAmbiguous(device.uuids, among: WatchFamilies.dialects))), as: UTF8.self))
                } else {
                    let dialect = DialectResolution.hint(device.uuids, among: WatchFamilies.dialects).map { "  \($0)" } ?? ""
                    print("\(device.address)  \(device.rssi.map { "\($0) dBm" } ?? "–")  \(device.name ?? "(no name)")\(device.paired ? "  paired" : "")\(dialect)")
                }
                fflush(nil)
                if let count, seen.count >= count { break }
            }
            if !json && seen.isEmpty { print(all ? "no devices found" : "no watches found; is the watch awake and near? (--all shows every device)") }
        }
    }
}
