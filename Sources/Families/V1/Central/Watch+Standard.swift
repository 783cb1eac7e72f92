import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSTransport

/// The Bluetooth SIG's standard services (Device Information, Battery, Current Time, Heart
/// Rate) on any watch that has them; a watch without protocol v1 is served through these alone.
extension Watch {
    /// Whether the current (or last) link has protocol v1; true before the first connect.
    var hasProtocolV1: Bool { services?.contains(.protocolV1) ?? true }

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
        return try StandardServicesLink(link: connection, configuration: configuration).require(characteristic)
    }

    private func standardLink() throws -> StandardServicesLink {
        guard let connection else { throw WatchError.notConnected }
        return StandardServicesLink(link: connection, configuration: configuration)
    }

    /// The Device Information strings the watch has.
    func readDeviceInformation(_ link: any TransportConnection) async throws -> StandardDeviceInformation {
        try await StandardServicesLink(link: link, configuration: configuration).deviceInformation()
    }

    /// DEVICE_INFO's place for a watch without protocol v1 (`StandardServicesLink.deviceInfo`).
    func standardDeviceInfo(_ link: any TransportConnection) async throws -> DeviceInfo {
        try await StandardServicesLink(link: link, configuration: configuration).deviceInfo()
    }

    /// Battery Level (0x2A19), percent.
    public func standardBatteryLevel() async throws -> UInt8 { try await standardLink().batteryLevel() }

    /// Battery Level notifications, percent, until the link ends. Malformed values are skipped.
    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> { try await standardLink().batteryLevelChanges() }

    /// Writes Current Time (and Local Time Information when the watch has it).
    func writeStandardTime() async throws { try await standardLink().writeTime() }

    /// Heart Rate Measurement notifications, parsed, until the link ends. A malformed value is
    /// counted in `malformedHeartRateValues` and reported to `malformed`, never delivered.
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)? = nil) async throws -> AsyncStream<HeartRateMeasurement> {
        try await standardLink().heartRateMeasurements { [weak self] error in
            await self?.countMalformedHeartRate()
            malformed?(error)
        }
    }

    func countMalformedHeartRate() { malformedHeartRateValues += 1 }

    /// Body Sensor Location (0x2A38).
    public func bodySensorLocation() async throws -> BodySensorLocation { try await standardLink().bodySensorLocation() }
}
