import TSDevice
import TSHuami
import TSModels

extension Dialect {
    /// Huami's classic protocol: Xiaomi Mi Band 3–6, Amazfit Bip/Bip S/Bip U, GTS/GTR 1–2 (protocol-spec/huami.md).
    public static let huami = Dialect(rawValue: "huami")
}

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

extension PairingCredential {
    /// The band's 16-byte auth key: `pair --auth-key HEX`, `auth-key:` in serve's configuration.
    public static let huamiAuthKey = PairingCredential(
        key: "auth-key", holder: "a Huami band (Mi Band 3–6, Amazfit Bip, GTS, GTR)",
        meaning: "the band's 16-byte auth key as 32 hex digits (from the vendor's cloud, e.g. with huami-token; it changes when the band is paired with its app)",
        neededOnEveryConnect: true, problem: { text in
            do {
                _ = try HuamiAuthKey(hex: text)
                return nil
            } catch let error as HuamiError {
                return error.message
            } catch {
                return String(describing: error)
            }
        })
}

extension WatchDialect {
    /// Huami bands; recognised by their vendor service `FEE0`, which no other dialect here uses.
    public static let huami: WatchDialect = {
        var dialect = WatchDialect(
            name: .huami, summary: "Huami bands (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2): auth key, alarms, heart rate, per-minute activity",
            gatt: .huami, credential: .huamiAuthKey, captureDecoder: HuamiCaptureDecoder(),
            makeCentral: { HuamiWatch(transport: $0, configuration: $1) })
        dialect.presentation.noSmartWake = "no (a Huami band has no smart wake)"
        return dialect
    }()
}
