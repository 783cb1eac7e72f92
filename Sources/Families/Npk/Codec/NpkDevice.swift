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
    /// statistics rules, naps or deleting synced data: the gateway's rule, no naps, keeps data.
    public static func deviceInfo(from info: TSMetaPeripheralInfo, services: ServiceSet?) -> DeviceInfo {
        DeviceInfo(model: info.model, firmware: info.version, capabilities: capabilities(from: info), services: services)
    }

    /// A sync asks for a range and gets it a day a part; the watch keeps what it sent and takes no
    /// acknowledgement. Its heart-rate history comes with its heart-rate monitor.
    public static func capabilities(from info: TSMetaPeripheralInfo) -> WatchCapabilities {
        let maxAlarms = max(0, Int(info.limits.alarm))
        let monitorTypes = NpkAbilities(info.ability).monitorTypes
        return WatchCapabilities(
            alarms: maxAlarms > 0 ? .init(maxCount: maxAlarms, labelMaxBytes: NpkAlarms.maxLabelBytes, remarkMaxBytes: 0, snooze: false) : nil,
            monitorTypes: monitorTypes, sleepSync: .init(selection: .range, paged: true, deletesSynced: false, acknowledges: false),
            battery: true, batteryNotifications: true, clock: true, heartRateHistory: monitorTypes.contains(.heartRate))
    }

    public static func battery(from model: TSMetaBatteryModel) throws -> BatteryStatus {
        guard model.level <= 100 else {
            throw NpkError(.batteryLevelOutOfRange, "battery level \(model.level) % from the watch is over 100")
        }
        return BatteryStatus(level: UInt8(model.level), state: model.charging ? .charging : .discharging)
    }
}
