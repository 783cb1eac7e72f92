import Foundation
import TSGATT
import TSModels
import TSTransport

/// A watch served through the Bluetooth SIG's standard services alone (the `.standard`
/// dialect): Device Information, Battery, Current Time, Heart Rate. Everything else (alarms,
/// monitors, sleep records, live stages) answers "not supported" at once.
public actor StandardServicesWatch: LinkedCentral {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    public private(set) var info: DeviceInfo?
    public package(set) var connectTimings = ConnectTimings()
    /// Heart Rate Measurement values refused as malformed since this actor was made.
    public private(set) var malformedHeartRateValues = 0

    package var connection: (any TransportConnection)?
    package var connectionGeneration = 0
    package var requestTurns = RequestTurns()
    private let fanOut = EventFanOut<WatchEvent>(buffer: 64)

    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration()) {
        self.transport = transport
        self.configuration = configuration
    }

    public nonisolated var dialect: Dialect { .standard }
    public nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }
    public var isConnected: Bool { connection != nil }
    public var linkMTU: Int? { connection?.mtu.value }

    public var capabilities: WatchCapabilities {
        info.map { StandardServicesLink.capabilities($0.offeredServices) } ?? .nothing
    }

    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        let (opened, _, _) = try await openLink()
        return try await describing {
            let described = try await link().deviceInfo()
            info = described
            // Setting the clock on connect is a courtesy here; a watch whose Current Time is
            // read-only keeps its own.
            if configuration.syncTimeOnConnect && opened.standardCharacteristics.contains(.currentTime) { try? await syncTime() }
            return described
        }
    }

    public func disconnect() async { await closeLink() }

    /// Its standard characteristics are read and written, never notified on this link.
    package func received(_ bytes: [UInt8]) {}

    package func releaseLink(reason: String) { fanOut.send(.linkLost(reason: reason)) }

    private func link() throws -> StandardServicesLink {
        guard let connection else { throw WatchError.notConnected }
        return StandardServicesLink(link: connection, configuration: configuration)
    }

    public func syncTime() async throws { try await link().writeTime() }

    public func battery() async throws -> BatteryStatus {
        BatteryStatus(level: try await link().batteryLevel(), state: .unknown)
    }

    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> { try await link().batteryLevelChanges() }

    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement> {
        try await link().heartRateMeasurements { [weak self] error in
            await self?.countMalformedHeartRate()
            malformed?(error)
        }
    }

    private func countMalformedHeartRate() { malformedHeartRateValues += 1 }

    /// Body Sensor Location (0x2A38).
    public func bodySensorLocation() async throws -> BodySensorLocation { try await link().bodySensorLocation() }

    /// What a protocol v1 request asks for, for the "not supported" message (protocol v1's
    /// central says it too, of a watch found without its service).
    public static func protocolV1Features(_ kind: String) -> String {
        "\(kind) — it has no protocol v1 service (alarms, monitors, sleep records need it); `tsgateway info` lists what it offers"
    }

    // What protocol v1 would carry, in the words the CLI's commands use.
    public func alarms() async throws -> [Alarm] { throw WatchError.unsupported(Self.protocolV1Features("alarms")) }
    public func setAlarms(_ alarms: [Alarm]) async throws { throw WatchError.unsupported(Self.protocolV1Features("alarms")) }
    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig { throw WatchError.unsupported(Self.protocolV1Features("monitor settings")) }
    public func setMonitorConfig(_ config: MonitorConfig) async throws { throw WatchError.unsupported(Self.protocolV1Features("monitor settings")) }
    public func setLiveSleepEvents(_ enabled: Bool) async throws { throw WatchError.unsupported(Self.protocolV1Features("live sleep stages")) }
    public func ring(slot: Int, purpose: RingPurpose) async throws -> RingOutcome { throw WatchError.unsupported(Self.protocolV1Features("ringing an alarm")) }
    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer { throw WatchError.unsupported(Self.protocolV1Features("sleep records")) }
    public func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int { throw WatchError.unsupported(Self.protocolV1Features("sleep records")) }
}
