/// What a watch said about itself on connect, whatever its dialect: its model and firmware, what
/// it can do (`WatchCapabilities`, the one capability type above the device layer), the services
/// GATT discovery found, and its Device Information strings when it has that service.
public struct DeviceInfo: Sendable, Hashable, Codable {
    public var model: String
    public var firmware: String
    public var capabilities: WatchCapabilities
    /// Nil when not known (a record from before services were discovered): protocol v1 only.
    public var services: ServiceSet?
    public var standard: StandardDeviceInformation?
    /// The dialect the watch was spoken to in; nil when not known (a record from before dialects).
    public var dialect: Dialect?

    public init(model: String, firmware: String, capabilities: WatchCapabilities, services: ServiceSet? = nil,
                standard: StandardDeviceInformation? = nil, dialect: Dialect? = nil) {
        self.dialect = dialect
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
        self.services = services
        self.standard = standard
    }

    /// The dialect it was spoken to in; when not recorded, protocol v1 for a watch with v1's
    /// capabilities or service, else the standard services.
    public var spokenDialect: Dialect {
        dialect ?? (capabilities.sleepSync != nil || services?.contains(.protocolV1) == true ? .protocolV1 : .standard)
    }

    /// The services, protocol v1 alone when unknown.
    public var offeredServices: ServiceSet { services ?? .protocolV1Only }
}

public enum BatteryState: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown, discharging, charging, full
}

public struct BatteryStatus: Sendable, Hashable, Codable {
    /// Percent, 0…100.
    public var level: UInt8
    public var state: BatteryState

    public init(level: UInt8, state: BatteryState) {
        self.level = level
        self.state = state
    }
}
