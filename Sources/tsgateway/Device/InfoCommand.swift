import ArgumentParser
import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSStore

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Show the watch's model, firmware, capabilities, battery and last sync.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print JSON: {watch, model, firmware, dialect, services: [...], deviceInformation: {...}, capabilities: {...}, battery: {level, state}, heartRate, lastSync}.")
    var json = false

    struct Output: Encodable {
        var watch: WatchID
        var model: String
        var firmware: String
        /// The dialect the gateway speaks with it (`v1`, `standard`, …).
        var dialect: Dialect
        /// What GATT discovery found: `protocol-v1`, `device-information`, `battery`, `current-time`, `heart-rate`.
        var services: ServiceSet
        /// The Device Information strings; absent without that service.
        var deviceInformation: StandardDeviceInformation?
        var capabilities: WatchCapabilities
        /// Absent when the watch has no battery reading (neither protocol v1 nor the Battery service).
        var battery: BatteryStatus?
        /// Heart rate as it is measured (`tsgateway hr watch`).
        var heartRate: Bool
        var lastSync: Date?
    }

    func run() async throws {
        let output = try await WatchAccessor.run(connection) { watch in
            let info = try await watch.info()
            let services = info.offeredServices
            // A watch without a battery reading answers "not supported" (79): shown as not offered.
            let battery: BatteryStatus?
            do { battery = try await watch.battery() } catch where ErrorCategory.of(error) == .notSupported { battery = nil }
            let lastSync = try await watch.lastSync()
            let heartRate = try await watch.capabilities()?.heartRate ?? services.contains(.heartRate)
            return Output(watch: watch.watchId, model: info.model, firmware: info.firmware, dialect: info.spokenDialect, services: services,
                          deviceInformation: info.standard,
                          capabilities: info.capabilities, battery: battery, heartRate: heartRate, lastSync: lastSync)
        }
        if json {
            try JSONOutput.printWithDates(output)
            return
        }
        let caps = output.capabilities
        var rows = [
            ["watch", output.watch.rawValue],
            ["model", output.model],
            ["firmware", output.firmware],
            ["dialect", output.dialect.rawValue],
            ["services", Self.services(output.services, dialect: output.dialect)],
        ]
        if let standard = output.deviceInformation {
            let strings: [(String, String?)] = [("manufacturer", standard.manufacturer), ("serial", standard.serialNumber),
                                                ("hardware", standard.hardwareRevision), ("software", standard.softwareRevision)]
            rows += strings.compactMap { name, value in value.map { [name, $0] } }
        }
        rows.append(["battery", output.battery.map { "\($0.level) % (\($0.state.rawValue))" } ?? "not offered"])
        if output.dialect != .standard || caps.alarms != nil || !caps.monitorTypes.isEmpty || caps.sleepSync != nil {
            let limits = caps.alarmLimits
            let remarks = limits.remarkMaxBytes > 0 ? ", remarks ≤ \(limits.remarkMaxBytes) bytes" : ", no remarks"
            let labels = limits.labelMaxBytes > 0 ? "labels ≤ \(limits.labelMaxBytes) bytes" : "no labels"
            let setOnly = caps.alarms?.readable == false ? "; set only, not read back" : ""
            rows.append(["alarms", limits.maxAlarms == 0 ? "none" : "up to \(limits.maxAlarms), \(labels)\(remarks)\(setOnly)"])
            if Self.presentation(of: output.dialect).reportsSleepRule {
                let rule = caps.statisticsRule.map { "\($0.rawValue)" } ?? "none of its own"
                rows.append(["sleep rule", "\(rule)\(caps.naps ? ", naps" : "")\(caps.sleepSync?.deletesSynced == true ? ", deletes synced records" : "")\(caps.liveStages ? ", live stages" : "")"])
            }
            rows += [
                ["monitors", caps.monitorTypes.isEmpty ? "none" : caps.monitorTypes.map(\.name).joined(separator: ", ")],
                ["smart wake", Self.smartWake(caps, dialect: output.dialect)],
            ]
        } else {
            rows.append(["protocol v1", "no (alarms, monitors and sleep records are not offered)"])
        }
        rows.append(["heart rate", output.heartRate ? "yes (`tsgateway hr watch`)" : "no"])
        rows.append(["last sync", output.lastSync.map { $0.formatted(date: .abbreviated, time: .shortened) } ?? "never"])
        print(TextTable.render(rows))
    }

    /// The alarm features smart wake needs (protocol v1.1's), or that the watch has none of them.
    static func smartWake(_ caps: WatchCapabilities, dialect: Dialect) -> String {
        var parts: [String] = []
        if caps.maxSmartWindow > 0 { parts.append("windows up to \(caps.maxSmartWindow) min (`alarms set --smart`)") }
        if caps.ring { parts.append("rings on command") }
        if caps.alarmAlerts { parts.append("reports rings") }
        guard parts.isEmpty else { return parts.joined(separator: ", ") }
        return presentation(of: dialect).noSmartWake
    }

    /// What the dialect's coordinator says `info` should show of its watches (nothing special for one this build does not know).
    static func presentation(of dialect: Dialect) -> DialectPresentation {
        (try? WatchFamilies.dialect(named: dialect))?.presentation ?? DialectPresentation()
    }

    /// The dialect's own service (protocol v1's is one of `services`), then the standard ones.
    static func services(_ services: ServiceSet, dialect: Dialect) -> String {
        let known = try? WatchFamilies.dialect(named: dialect)
        let own = known?.gatt == nil || known?.presentation.serviceListedByTransport == true ? [] : ["\(dialect) (its own service)"]
        let titles = own + services.sorted.map(\.title)
        return titles.isEmpty ? "none" : titles.joined(separator: ", ")
    }
}
