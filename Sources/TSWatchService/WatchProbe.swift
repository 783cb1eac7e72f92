import Foundation
import TSBlueZ
import TSBlueZTransport
import TSDevice
import TSGATT
import TSModels
import TSTransport

/// What `tsgateway probe` learned of a device: its GATT table, its Device Information, each
/// registered dialect's identification exchange whose service it offers, and what to type next.
public struct ProbeReport: Sendable, Hashable, Codable {
    public struct Characteristic: Sendable, Hashable, Codable {
        public var uuid: String
        /// The specification's name for a standard characteristic tsgateway knows.
        public var name: String?
        /// BlueZ's flags: read, write, write-without-response, notify, indicate, …
        public var properties: [String]
    }

    public struct Service: Sendable, Hashable, Codable {
        public var uuid: String
        /// What it is to tsgateway: a standard service's name, or the dialects that use it.
        public var name: String?
        public var characteristics: [Characteristic]
    }

    /// One Device Information string.
    public struct Field: Sendable, Hashable, Codable {
        public var name: String
        public var value: String
    }

    /// One dialect's identification exchange and how it went.
    public struct Attempt: Sendable, Hashable, Codable {
        public var dialect: Dialect
        public var asked: String
        /// What the watch answered; nil: no answer in this dialect (`failure` says why).
        public var answer: DialectIdentity?
        public var failure: String?
    }

    public enum Verdict: String, Sendable, Hashable, Codable {
        /// A dialect answered its identification exchange.
        case identified
        /// No dialect answered, but the device offers standard services tsgateway reads.
        case standardServicesOnly = "standard-services-only"
        /// Nothing tsgateway speaks.
        case unknown
    }

    public var address: String
    public var name: String?
    public var services: [Service]
    public var deviceInformation: [Field]
    public var attempts: [Attempt]
    public var verdict: Verdict
    /// The dialect to pair it in; nil when none fits (`verdict` unknown).
    public var dialect: Dialect?
    /// What to type or read next, in a sentence.
    public var next: String
}

/// Why a probe could not get as far as the GATT table.
public struct ProbeError: CategorizedError, Sendable, CustomStringConvertible {
    public var address: String
    public var reason: String
    public var category: ErrorCategory

    public var description: String {
        let cause = reason.trimmingCharacters(in: CharacterSet(charactersIn: ".?! "))
        return "\(address) did not answer: \(cause). A watch connected to a phone may not answer another central; "
            + "`tsgateway scan --all` lists what is in reach"
    }
}

/// `tsgateway probe`: connects, reads, asks; writes nothing that changes the watch.
public enum WatchProbe {
    /// Where README's "Adding a watch" is, for a device no dialect answers.
    public static let addingAWatch = "README.md, \"Reporting a problem / adding a watch\" (docs/reporting.md, \"Adding a watch\")"

    /// Probes the device at `address` through BlueZ: connect (within `timeout`), the GATT table,
    /// Device Information, then every registered dialect's identification exchange whose service
    /// it offers, each over its own link; the link is closed at the end.
    public static func probe(bluez: BlueZ, address: WatchID, adapter: String?, timeout: Duration = .seconds(15),
                             dialects: [WatchDialect],
                             configuration: WatchConfiguration = .probing) async throws -> ProbeReport {
        let found = try await bluez.adapter(adapter)
        let device: DeviceHandle
        do {
            device = try await bluez.discover(address: address.rawValue, adapter: found, within: timeout)
            try await bluez.connect(device, timeout: timeout, attempts: 2)
        } catch {
            let category = ErrorCategory.of(error)
            // BlueZ's own refusals (a page timeout, an aborted LE connection) are the device not answering too.
            guard category != .cancelled && category != .permission else { throw error }
            throw ProbeError(address: address.rawValue, reason: String(describing: error), category: category)
        }
        do {
            let characteristics = try await bluez.characteristics(of: device)
            let name = try? await bluez.deviceProperties(device)["Name"]?.stringValue
            var information: [ProbeReport.Field] = []
            for wanted in StandardCharacteristic.allCases where wanted.service == .deviceInformation {
                guard let found = characteristics.first(where: { $0.serviceUUID == wanted.service.uuid && $0.uuid == wanted.uuid }),
                      found.flags.contains("read"), let bytes = try? await bluez.read(found) else { continue }
                information.append(ProbeReport.Field(name: wanted.title, value: text(bytes)))
            }
            let services = table(characteristics, dialects: dialects)
            let attempts = await identify(serviceUUIDs: services.map(\.uuid), dialects: dialects, configuration: configuration) { dialect in
                BlueZTransport(bluez: bluez, address: device.address, adapter: adapter, profile: dialect.gatt, connectTimeout: timeout)
            }
            try? await bluez.disconnect(device)
            return conclude(address: device.address, name: name, services: services, deviceInformation: information, attempts: attempts)
        } catch {
            try? await bluez.disconnect(device)
            throw error
        }
    }

    /// Runs the identification exchange of each dialect in `dialects` whose service is among
    /// `serviceUUIDs`, one after the other, each over a link `transport` makes for it.
    public static func identify(serviceUUIDs: [String], dialects: [WatchDialect],
                                configuration: WatchConfiguration = .probing,
                                transport: (WatchDialect) -> any WatchTransport) async -> [ProbeReport.Attempt] {
        var attempts: [ProbeReport.Attempt] = []
        for dialect in DialectResolution.serving(serviceUUIDs, among: dialects) {
            guard let identification = dialect.identification else { continue }
            do {
                let answer = try await identification.run(transport(dialect), configuration)
                attempts.append(ProbeReport.Attempt(dialect: dialect.name, asked: identification.asks, answer: answer))
            } catch {
                attempts.append(ProbeReport.Attempt(dialect: dialect.name, asked: identification.asks, failure: String(describing: error)))
            }
        }
        return attempts
    }

    /// The verdict and the next step from what the probe found.
    public static func conclude(address: String, name: String?, services: [ProbeReport.Service], deviceInformation: [ProbeReport.Field],
                                attempts: [ProbeReport.Attempt]) -> ProbeReport {
        let answered = attempts.filter { $0.answer != nil }
        let standard = services.contains { WatchService(uuid: $0.uuid)?.isStandard ?? false }
        var report = ProbeReport(address: address, name: name, services: services, deviceInformation: deviceInformation, attempts: attempts,
                                 verdict: .unknown, dialect: nil, next: "")
        if let first = answered.first {
            report.verdict = .identified
            report.dialect = first.dialect
            let others = answered.dropFirst().map(\.dialect.rawValue)
            let also = others.isEmpty ? "" : " (it answered \(others.joined(separator: ", ")) too: try each)"
            report.next = "tsgateway pair \(address) --dialect \(first.dialect)\(also)"
        } else if standard {
            report.verdict = .standardServicesOnly
            report.dialect = .standard
            let unanswered = attempts.isEmpty ? "" : " (it did not answer \(attempts.map(\.dialect.rawValue).joined(separator: ", ")))"
            report.next = "tsgateway pair \(address) --dialect standard: standard services only\(unanswered); "
                + "to teach tsgateway its own protocol see \(addingAWatch)"
        } else {
            report.next = "no dialect tsgateway speaks answered and it has no standard service it reads; see \(addingAWatch) "
                + "and send `tsgateway report-problem --device \(address) --out report.tar.gz`"
        }
        return report
    }

    /// The services of a device, from its characteristics as BlueZ lists them, named where tsgateway knows them.
    static func table(_ characteristics: [GattCharacteristic], dialects: [WatchDialect]) -> [ProbeReport.Service] {
        var order: [String] = []
        var grouped: [String: [ProbeReport.Characteristic]] = [:]
        for characteristic in characteristics {
            if grouped[characteristic.serviceUUID] == nil { order.append(characteristic.serviceUUID) }
            let name = StandardCharacteristic.allCases.first { $0.uuid == characteristic.uuid }?.title
            grouped[characteristic.serviceUUID, default: []].append(
                ProbeReport.Characteristic(uuid: characteristic.uuid, name: name, properties: characteristic.flags))
        }
        return order.map { uuid in
            ProbeReport.Service(uuid: uuid, name: serviceName(uuid, dialects: dialects), characteristics: grouped[uuid] ?? [])
        }
    }

    /// A standard service's name or the dialects whose service it is.
    public static func serviceName(_ uuid: String, dialects: [WatchDialect]) -> String? {
        let users = DialectResolution.serving([uuid], among: dialects)
        if !users.isEmpty {
            let shared = DialectResolution.isAmbiguous([uuid], among: dialects) ? ", shared with other protocols" : ""
            return users.map(\.name.rawValue).joined(separator: ", ") + " dialect's service" + shared
        }
        switch WatchService(uuid: uuid) {
        case .deviceInformation: return "Device Information"
        case .battery: return "Battery"
        case .currentTime: return "Current Time"
        case .heartRate: return "Heart Rate"
        default: return nil
        }
    }

    /// A Device Information string as text, trailing NULs and blanks cut.
    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces.union(.controlCharacters))
    }
}

extension WatchConfiguration {
    /// A probe's patience: an answer within 3 s, asked twice, so a device that does not speak a
    /// dialect costs seconds, not half a minute.
    public static var probing: WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.requestTimeout = .seconds(3)
        configuration.requestRetries = 1
        return configuration
    }
}
