import TSModels

extension GATTProfile {
    /// The band's vendor service `FEE0` (what it advertises): its configuration characteristic
    /// (`…0003…`, alarms) is the profile's write/notify pair; the auth, fetch, data, battery,
    /// clock and heart-rate characteristics are addressed by service and UUID (`HuamiCharacteristic`),
    /// and named here so that a capture of a band's exchange follows them.
    public static let huami = GATTProfile(service: HuamiGATT.service, writeCharacteristic: HuamiGATT.configuration,
                                          notifyCharacteristic: HuamiGATT.configuration, writeMode: .withResponse,
                                          characteristics: HuamiCharacteristic.all)
}

/// The band's characteristics beside the profile's pair, as the transport addresses them.
public enum HuamiCharacteristic {
    /// The auth characteristic is under the second vendor service (Gadgetbridge `HuamiService`).
    public static let auth = GATTCharacteristicID(service: HuamiGATT.secondService, uuid: HuamiGATT.auth)
    public static let fetchControl = GATTCharacteristicID(service: HuamiGATT.service, uuid: HuamiGATT.fetchControl)
    public static let activityData = GATTCharacteristicID(service: HuamiGATT.service, uuid: HuamiGATT.activityData)
    public static let battery = GATTCharacteristicID(service: HuamiGATT.service, uuid: HuamiGATT.battery)
    /// Current Time (`2A2B`) sits in the vendor service on these bands, not in the SIG's Current Time Service.
    public static let currentTime = GATTCharacteristicID(service: HuamiGATT.service, uuid: HuamiGATT.currentTime)
    public static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    public static let heartRateControlPoint = GATTCharacteristicID(service: heartRateService, uuid: HuamiGATT.heartRateControlPoint)
    public static let heartRateMeasurement = GATTCharacteristicID(service: heartRateService, uuid: HuamiGATT.heartRateMeasurement)
    /// Every one of them, as the profile names them.
    public static let all = [auth, fetchControl, activityData, battery, currentTime, heartRateControlPoint, heartRateMeasurement]
}
