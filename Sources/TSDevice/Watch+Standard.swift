import Foundation
import TSModels
import TSProtocol
import TSTransport

/// The Bluetooth SIG's standard services (Device Information, Battery, Current Time, Heart
/// Rate) on any watch that has them; a watch without protocol v1 is served through these alone.
extension Watch {
    /// Whether the current (or last) link has protocol v1; true before the first connect.
    var hasProtocolV1: Bool { services?.contains(.protocolV1) ?? true }

    /// What a protocol v1 request asks for, for the "not supported" message.
    static func protocolV1Features(_ kind: String) -> String {
        "\(kind) — it has no protocol v1 service (alarms, monitors, sleep records need it); `tsgateway info` lists what it offers"
    }

    /// The feature a protocol v1 command belongs to, in the words of the CLI's commands.
    static func feature(of command: CommandID) -> String {
        switch command {
        case .alarmsGet, .alarmsSet, .alarmsChanged: "alarms"
        case .monitorGet, .monitorSet: "monitor settings"
        case .sleepQuery, .sleepPage, .sleepPageAck, .sleepCommit, .sleepAbort: "sleep records"
        case .liveSubscribe, .liveStage: "live sleep stages"
        case .ring, .alarmAlert: "ringing an alarm"
        case .timeSet: "setting the clock over protocol v1"
        default: "protocol v1 (\(name(of: command)))"
        }
    }

    func standardConnection(for characteristic: StandardCharacteristic) throws -> any TransportConnection {
        guard let connection else { throw WatchError.notConnected }
        guard connection.standardCharacteristics.contains(characteristic) else {
            throw WatchError.unsupported(characteristic.service.standardFeature(missing: characteristic, offered: connection.services))
        }
        return connection
    }

    /// The Device Information strings the watch has.
    func readDeviceInformation(_ link: any TransportConnection) async throws -> StandardDeviceInformation {
        var information = StandardDeviceInformation()
        for characteristic in StandardCharacteristic.deviceInformationStrings where link.standardCharacteristics.contains(characteristic) {
            information[characteristic] = try DeviceInformationString.decode(try await link.read(characteristic), characteristic)
        }
        return information
    }

    /// DEVICE_INFO's place for a watch without protocol v1: model and firmware from Device
    /// Information when it has it (else the name the peripheral gives itself stands in for the
    /// model), no protocol v1 capabilities.
    func standardDeviceInfo(_ link: any TransportConnection) async throws -> DeviceInfo {
        let standard = link.services.contains(.deviceInformation) ? try await readDeviceInformation(link) : nil
        var model = standard?.model
        if model == nil { model = await link.peripheralName() }
        return DeviceInfo(model: model ?? "unknown", firmware: standard?.firmwareRevision ?? standard?.softwareRevision ?? "",
                          capabilities: .none, services: link.services, standard: standard)
    }

    /// Battery Level (0x2A19), percent.
    public func standardBatteryLevel() async throws -> UInt8 {
        let link = try standardConnection(for: .batteryLevel)
        return try BatteryLevelValue.decode(try await link.read(.batteryLevel))
    }

    /// Battery Level notifications, percent, until the link ends. Malformed values are skipped.
    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> {
        let values = try await standardConnection(for: .batteryLevel).notifications(of: .batteryLevel)
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
    func writeStandardTime() async throws {
        let link = try standardConnection(for: .currentTime)
        let now = configuration.now()
        let zone = configuration.timeZone
        try await link.write(CurrentTimeValue(now, in: zone, reason: .externalReference).value, to: .currentTime)
        if link.standardCharacteristics.contains(.localTimeInformation) {
            try await link.write(LocalTimeInformationValue(zone, at: now).value, to: .localTimeInformation)
        }
    }

    /// Heart Rate Measurement notifications, parsed, until the link ends. A malformed value is
    /// counted in `malformedHeartRateValues` and reported to `malformed`, never delivered.
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)? = nil) async throws -> AsyncStream<HeartRateMeasurement> {
        let values = try await standardConnection(for: .heartRateMeasurement).notifications(of: .heartRateMeasurement)
        return AsyncStream { continuation in
            let task = Task { [weak self] in
                for await value in values {
                    switch Result(catching: { () throws(StandardValueError) in try HeartRateMeasurement(value: value) }) {
                    case let .success(measurement): continuation.yield(measurement)
                    case let .failure(error):
                        await self?.countMalformedHeartRate()
                        malformed?(error)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func countMalformedHeartRate() { malformedHeartRateValues += 1 }

    /// Body Sensor Location (0x2A38).
    public func bodySensorLocation() async throws -> BodySensorLocation {
        let link = try standardConnection(for: .bodySensorLocation)
        return try BodySensorLocation(value: try await link.read(.bodySensorLocation))
    }
}

extension WatchService {
    /// What a watch lacking `characteristic` cannot do, for the "not supported" message.
    func standardFeature(missing characteristic: StandardCharacteristic, offered: ServiceSet) -> String {
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
