import ArgumentParser
import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSWatchService

struct ProbeCommand: AsyncParsableCommand {
    /// Each known dialect's identification exchange, from its registration: "v1: …; npk: …".
    static var identifications: String {
        WatchFamilies.dialects.compactMap { dialect in dialect.identification.map { "\(dialect.name): \($0.asks)" } }.joined(separator: "; ")
    }

    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Ask a device which dialect it speaks, without changing anything on it.",
        discussion: """
            Connects through BlueZ, lists the GATT table (services, characteristics and their \
            properties), reads Device Information, then runs the identification exchange of \
            every dialect whose service the device offers (\(identifications)). None of them \
            sets the clock, pairs, binds or changes a setting. Says which dialect answered \
            and what to type next (`tsgateway pair ADDRESS --dialect NAME`); a device that \
            answers none is "standard services only" when it has them, else unknown: see \
            README's "Reporting a problem / adding a watch".

            Examples:
              tsgateway probe AA:BB:CC:DD:EE:FF
              tsgateway probe AA:BB:CC:DD:EE:FF --adapter hci1 --json
            """)
    @Argument(help: "The device's Bluetooth address, AA:BB:CC:DD:EE:FF (`tsgateway scan --all` lists those in reach).",
              transform: WatchAddressArgument.parse)
    var address: WatchID
    @Option(help: ArgumentHelp("The adapter (default: the first).", valueName: "hciN"))
    var adapter: String?
    @Option(help: "Seconds to find and connect to the device.")
    var timeout: Int = 15
    @Flag(help: "Print JSON: {address, name, services: [{uuid, name, characteristics: [{uuid, name, properties}]}], deviceInformation, attempts: [{dialect, asked, answer, failure}], verdict, dialect, next}.")
    var json = false

    func validate() throws {
        if let adapter { _ = try adapterIndexOrUsage(adapter) }
        guard (1...120).contains(timeout) else { throw ValidationError("--timeout must be 1…120 seconds, got \(timeout)") }
    }

    func run() async throws {
        let address = address
        let adapter = adapter
        let timeout = timeout
        if !json { FileHandle.standardError.write(Data("probing \(address)…\n".utf8)) }
        let report = try await withBlueZ { bluez in
            try await WatchProbe.probe(bluez: bluez, address: address, adapter: adapter, timeout: .seconds(timeout), dialects: WatchFamilies.dialects)
        }
        if json { return try JSONOutput.print(report) }
        print(Self.text(report))
    }

    /// The report as a person reads it: the table, Device Information, each exchange, the verdict.
    static func text(_ report: ProbeReport) -> String {
        var lines = ["\(report.address)  \(report.name ?? "(no name)")", "", "GATT table:"]
        for service in report.services {
            lines.append("  service \(service.uuid)" + (service.name.map { "  (\($0))" } ?? ""))
            for characteristic in service.characteristics {
                lines.append("    \(characteristic.uuid)  \(characteristic.properties.joined(separator: ","))"
                             + (characteristic.name.map { "  \($0)" } ?? ""))
            }
        }
        if report.services.isEmpty { lines.append("  (no services)") }
        lines += ["", "Device Information:"]
        lines += report.deviceInformation.isEmpty ? ["  (none)"] : report.deviceInformation.map { "  \($0.name): \($0.value)" }
        lines += ["", "Identification:"]
        if report.attempts.isEmpty { lines.append("  (no dialect's service: nothing to ask)") }
        for attempt in report.attempts {
            if let answer = attempt.answer {
                lines.append("  \(attempt.dialect): answered \(attempt.asked): model \(answer.model), firmware \(answer.firmware)"
                             + (answer.detail.map { ", \($0)" } ?? ""))
            } else {
                lines.append("  \(attempt.dialect): no answer to \(attempt.asked): \(attempt.failure ?? "")")
            }
        }
        lines.append("")
        switch report.verdict {
        case .identified: lines.append("dialect: \(report.dialect?.rawValue ?? "?")")
        case .standardServicesOnly: lines.append("dialect: standard services only")
        case .unknown: lines.append("dialect: unknown (none answered)")
        }
        lines.append("next: \(report.next)")
        return lines.joined(separator: "\n")
    }
}
