import Foundation
import TSGATT
import TSModels
import TSTransport

/// The Bluetooth SIG's standard services (Device Information, Battery, Current Time, Heart
/// Rate) on one open link, for the central of any dialect whose watches have them.
package struct StandardServicesLink: Sendable {
    package let link: any TransportConnection
    package let configuration: WatchConfiguration

    package init(link: any TransportConnection, configuration: WatchConfiguration) {
        self.link = link
        self.configuration = configuration
    }

    /// The link, when the watch has `characteristic`; else "not supported", naming what it offers.
    package func require(_ characteristic: StandardCharacteristic) throws -> any TransportConnection {
        guard link.standardCharacteristics.contains(characteristic) else {
            throw WatchError.unsupported(characteristic.service.standardFeature(missing: characteristic, offered: link.services))
        }
        return link
    }

    /// The Device Information strings the watch has.
    package func deviceInformation() async throws -> StandardDeviceInformation {
        var information = StandardDeviceInformation()
        for characteristic in StandardCharacteristic.deviceInformationStrings where link.standardCharacteristics.contains(characteristic) {
            information[characteristic] = try DeviceInformationString.decode(try await link.read(characteristic), characteristic)
        }
        return information
    }

    /// What a watch served by its standard services alone says about itself: model and firmware
    /// from Device Information when it has it (else the name the peripheral gives itself stands
    /// in for the model), no protocol v1 capabilities.
    package func deviceInfo() async throws -> DeviceInfo {
        let standard = link.services.contains(.deviceInformation) ? try await deviceInformation() : nil
        var model = standard?.model
        if model == nil { model = await link.peripheralName() }
        return DeviceInfo(model: model ?? "unknown", firmware: standard?.firmwareRevision ?? standard?.softwareRevision ?? "",
                          capabilities: Self.capabilities(link.services), services: link.services, standard: standard, dialect: .standard)
    }

    /// Battery Level (0x2A19), percent.
    package func batteryLevel() async throws -> UInt8 {
        try BatteryLevelValue.decode(try await require(.batteryLevel).read(.batteryLevel))
    }

    /// Battery Level notifications, percent, until the link ends. Malformed values are skipped.
    package func batteryLevelChanges() async throws -> AsyncStream<UInt8> {
        let values = try await require(.batteryLevel).notifications(of: .batteryLevel)
        return AsyncStream { continuation in
            let task = Task {
                for await value in values {
                    if let level = try? BatteryLevelValue.decode(value) { continuation.yield(level) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Writes Current Time (and Local Time Information when the watch has it) from
    /// `configuration.now()` in `configuration.timeZone`.
    package func writeTime() async throws {
        let link = try require(.currentTime)
        let now = configuration.now()
        let zone = configuration.timeZone
        try await link.write(CurrentTimeValue(now, in: zone, reason: .externalReference).value, to: .currentTime)
        if link.standardCharacteristics.contains(.localTimeInformation) {
            try await link.write(LocalTimeInformationValue(zone, at: now).value, to: .localTimeInformation)
        }
    }

    /// Heart Rate Measurement notifications, parsed, until the link ends; a malformed value goes
    /// to `malformed`, never into the stream.
    package func heartRateMeasurements(malformed: @escaping @Sendable (StandardValueError) async -> Void) async throws -> AsyncStream<HeartRateMeasurement> {
        let values = try await require(.heartRateMeasurement).notifications(of: .heartRateMeasurement)
        return AsyncStream { continuation in
            let task = Task {
                for await value in values {
                    switch Result(catching: { () throws(StandardValueError) in try HeartRateMeasurement(value: value) }) {
                    case let .success(measurement): continuation.yield(measurement)
                    case let .failure(error): await malformed(error)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Body Sensor Location (0x2A38).
    package func bodySensorLocation() async throws -> BodySensorLocation {
        try BodySensorLocation(value: try await require(.bodySensorLocation).read(.bodySensorLocation))
    }

    /// What a watch with these services can do through them alone.
    package static func capabilities(_ services: ServiceSet) -> WatchCapabilities {
        WatchCapabilities(battery: services.contains(.battery), batteryNotifications: services.contains(.battery),
                          clock: services.contains(.currentTime), heartRate: services.contains(.heartRate))
    }
}

extension WatchService {
    /// What a watch lacking `characteristic` cannot do, for the "not supported" message.
    package func standardFeature(missing characteristic: StandardCharacteristic, offered: ServiceSet) -> String {
        let what = switch characteristic {
        case .batteryLevel: "a battery reading"
        case .currentTime, .localTimeInformation: "setting its clock"
        case .heartRateMeasurement, .bodySensorLocation: "heart rate"
        default: "Device Information"
        }
        let list = offered.isEmpty ? "no service tsgateway knows" : offered.sorted.map(\.title).joined(separator: ", ")
        return "\(what) (no \(characteristic.title) characteristic; it offers \(list))"
    }
}
