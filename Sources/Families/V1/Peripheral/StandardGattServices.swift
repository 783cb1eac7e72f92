import TSBlueZ
import TSGATT
import TSModels
import TSProtocol
import TSSimulator

/// The simulated watch's standard services as BlueZ GATT services, values from
/// `SimulatedStandardServices`: Device Information (0x180A: its strings, read), Battery (0x180F:
/// Battery Level, read and notify) and Heart Rate (0x180D: Heart Rate Measurement, notify; Body
/// Sensor Location, read). Current Time is served on the loopback link only.
enum StandardGattServices {
    static let offered: [WatchService] = [.deviceInformation, .battery, .heartRate]

    /// BlueZ's flags for a characteristic the peripheral serves; nil for one it does not.
    static func flags(of characteristic: StandardCharacteristic) -> [String]? {
        switch characteristic {
        case .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision, .bodySensorLocation: ["read"]
        case .batteryLevel: ["read", "notify"]
        case .heartRateMeasurement: ["notify"]
        case .currentTime, .localTimeInformation: nil
        }
    }

    /// One GATT service per offered service the simulator has characteristics of.
    /// `heartRateSubscribed` hears StartNotify (true) and StopNotify (false) of Heart Rate Measurement.
    static func services(for standard: SimulatedStandardServices,
                         heartRateSubscribed: @escaping @Sendable (Bool) async -> Void) -> [LocalGattService] {
        offered.compactMap { service -> LocalGattService? in
            let characteristics = StandardCharacteristic.allCases
                .filter { $0.service == service && standard.standardCharacteristics.contains($0) }
                .compactMap { gattCharacteristic($0, of: standard, heartRateSubscribed: heartRateSubscribed) }
            return characteristics.isEmpty ? nil : LocalGattService(uuid: service.uuid, characteristics: characteristics)
        }
    }

    static func gattCharacteristic(_ characteristic: StandardCharacteristic, of standard: SimulatedStandardServices,
                                   heartRateSubscribed: @escaping @Sendable (Bool) async -> Void) -> LocalGattCharacteristic? {
        guard let flags = flags(of: characteristic) else { return nil }
        var served = LocalGattCharacteristic(uuid: characteristic.uuid, flags: flags)
        if flags.contains("read") {
            served.read = { try await standard.read(characteristic) }
        }
        if characteristic == .heartRateMeasurement {
            served.startNotify = { await heartRateSubscribed(true) }
            served.stopNotify = { await heartRateSubscribed(false) }
        }
        return served
    }

    /// The characteristics whose notifications the peripheral forwards to BlueZ.
    static let notified: [StandardCharacteristic] = [.batteryLevel, .heartRateMeasurement]
}
