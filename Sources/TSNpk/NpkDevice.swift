import TSModels

/// Capability bits of `TSMetaPeripheralInfo.ability`: bit i is bit i % 8 of byte i / 8.
public enum NpkAbility: Int, Sendable, Hashable, CaseIterable {
    case heartRate = 0
    case bloodPressure = 1
    case spo2 = 2
    case stress = 3
    case startWorkout = 4
    case femaleHealth = 5
    case reminders = 6
    case contacts = 7
    case weather = 11
    case music = 13
    case worldClock = 16
}

public struct NpkAbilities: Sendable, Hashable {
    public var bytes: [UInt8]

    public init(_ bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }

    public func contains(bit: Int) -> Bool {
        bit >= 0 && bit / 8 < bytes.count && bytes[bit / 8] >> UInt8(bit % 8) & 1 == 1
    }

    public func contains(_ ability: NpkAbility) -> Bool { contains(bit: ability.rawValue) }

    /// The monitor settings the watch has (temperature and sleep never on NPK), in type order.
    public var monitorTypes: [MonitorType] {
        [(NpkAbility.heartRate, MonitorType.heartRate), (.spo2, .spo2), (.bloodPressure, .bloodPressure), (.stress, .stress)]
            .filter { contains($0.0) }.map(\.1).sorted()
    }
}

public enum NpkDevice {
    /// Model, firmware and capabilities from device information. NPK says nothing about
    /// statistics rules, naps or deleting synced data: the gateway's rule 1, no naps, keeps data.
    public static func deviceInfo(from info: TSMetaPeripheralInfo, services: ServiceSet?) -> DeviceInfo {
        DeviceInfo(model: info.model, firmware: info.version, capabilities: capabilities(from: info), services: services)
    }

    public static func capabilities(from info: TSMetaPeripheralInfo) -> DeviceCapabilities {
        DeviceCapabilities(maxAlarms: max(0, Int(info.limits.alarm)), labelMaxBytes: NpkAlarms.maxLabelBytes, remarkMaxBytes: 0,
                           statisticsRule: .withNap, supportsNaps: false, deletesSyncedRecords: false, supportsLiveSleep: false,
                           monitorTypes: NpkAbilities(info.ability).monitorTypes)
    }

    public static func battery(from model: TSMetaBatteryModel) throws -> BatteryStatus {
        guard model.level <= 100 else {
            throw NpkError(.batteryLevelOutOfRange, "battery level \(model.level) % from the watch is over 100")
        }
        return BatteryStatus(level: UInt8(model.level), state: model.charging ? .charging : .discharging)
    }
}

/// The result of a bind or login (`TSMetaAuthRespond.result`).
public struct NpkBindResult: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = NpkBindResult(rawValue: 0)
    public static let userIdMismatch = NpkBindResult(rawValue: 1)
    public static let declinedOnWatch = NpkBindResult(rawValue: 2)
    public static let notAnsweredOnWatch = NpkBindResult(rawValue: 3)
    public static let okWithoutClassicBluetooth = NpkBindResult(rawValue: 4)
    public static let batteryTooLow = NpkBindResult(rawValue: 5)
    public static let factoryResetRunning = NpkBindResult(rawValue: 6)
    public static let factoryResetNeeded = NpkBindResult(rawValue: 7)
    public static let unknownFailure = NpkBindResult(rawValue: 127)

    /// 0 and 4, as the SDK counts them.
    public var isSuccess: Bool { self == .ok || self == .okWithoutClassicBluetooth }

    public var description: String {
        switch self {
        case .ok: "bound"
        case .userIdMismatch: "the watch is bound to another user id: pair again (bind) instead of logging in"
        case .declinedOnWatch: "the bind was declined on the watch"
        case .notAnsweredOnWatch: "nobody confirmed the bind on the watch in time: try again and confirm it on the watch"
        case .okWithoutClassicBluetooth: "bound (classic Bluetooth not connected)"
        case .batteryTooLow: "the watch's battery is too low to bind: charge it and try again"
        case .factoryResetRunning: "the watch is resetting to factory settings: wait and try again"
        case .factoryResetNeeded: "the watch must be reset to factory settings before it binds to a new user"
        case .unknownFailure: "the watch refused the bind (unknown failure)"
        default: "the watch refused the bind with result \(rawValue)"
        }
    }
}

/// What a sync (05/21) asks for; each type's data comes as list frames of 05/<type>.
public enum NpkSyncType: Int32, Sendable, Hashable, CaseIterable {
    case heartRate = 1, spo2, bloodPressure, stress, sleep, activity, sport

    public var dataCommand: NpkCommand { NpkCommand(cmd: 0x05, key: UInt8(rawValue)) }

    public func startRequest(fromUnix start: Int64, toUnix end: Int64) throws -> TSMetaSyncStartRequest {
        var request = TSMetaSyncStartRequest()
        request.start = try NpkTime.t2000(fromUnix: start)
        request.end = try NpkTime.t2000(fromUnix: end)
        request.type = rawValue
        return request
    }
}

/// The answer to a sync start.
public enum NpkSyncStartResult: Sendable, Hashable {
    /// List frames follow, then the end of sync (05/22).
    case started
    /// Nothing changed since the requested start: not an error.
    case nothingNew
    case failed(result: Int32)

    public init(_ response: TSMetaSyncStartResponse) {
        switch response.result {
        case 0: self = .started
        case 1: self = .nothingNew
        default: self = .failed(result: response.result)
        }
    }
}
