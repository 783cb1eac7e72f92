import TSDevice
import TSModels
import TSNpk

// The NPK family's registration terms: its dialect's name, its pairing secret, its `WatchDialect` and its identification exchange.

extension Dialect {
    /// TopStep's "new platform" protocol (protocol-spec/npk/topstep-npk.md).
    public static let npk = Dialect(rawValue: "npk")
}

extension PairingCredential {
    /// The code an NPK watch shows as a QR code for pairing (`AuthCode`'s rules).
    public static let npkAuthCode = PairingCredential(
        key: "auth-code", holder: "a TopStep NPK watch", meaning: "the code a TopStep NPK watch shows as a QR code for pairing",
        problem: { AuthCode.problem($0) })
}

extension WatchDialect {
    /// TopStep's NPK dialect.
    public static let npk: WatchDialect = {
        var dialect = WatchDialect(
            name: .npk, summary: "TopStep's NPK (\"new platform\") protocol, reconstructed from TopStep's SDK", gatt: .npk,
            identifiedByService: false, credential: .npkAuthCode, captureDecoder: NpkCaptureDecoder(), makeCentral: { NpkWatch(transport: $0, configuration: $1) })
        dialect.identification = .npk
        dialect.centralTimes = NpkCentralTimes()
        return dialect
    }()
}

extension DialectIdentification {
    /// NPK: device information (02/02) alone, without the login that a refused watch would answer with a bind.
    public static let npk = DialectIdentification(asks: "device information (02/02), without logging in") { transport, configuration in
        let info = try await NpkWatch(transport: transport, configuration: configuration.identifying).identify()
        return DialectIdentity(dialect: .npk, asked: "device information (02/02), without logging in", model: info.model, firmware: info.firmware,
                               detail: "up to \(info.capabilities.maxAlarms) alarms")
    }
}
