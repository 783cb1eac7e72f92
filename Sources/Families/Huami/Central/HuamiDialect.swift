import TSDevice
import TSHuami
import TSModels

extension Dialect {
    /// Huami's classic protocol: Xiaomi Mi Band 3–6, Amazfit Bip/Bip S/Bip U, GTS/GTR 1–2 (protocol-spec/huami/huami.md).
    public static let huami = Dialect(rawValue: "huami")
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
        dialect.centralTimes = HuamiCentralTimes()
        return dialect
    }()
}
