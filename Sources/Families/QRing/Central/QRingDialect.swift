import TSDevice
import TSModels
import TSQRing

// The QRing family's registration terms: its dialect's name, its `WatchDialect` and its identification exchange.

extension Dialect {
    /// QRing rings: Colmi R02–R12, Yawell (protocol-spec/qring/qring.md).
    public static let qring = Dialect(rawValue: "qring")
}

extension WatchDialect {
    /// QRing smart rings.
    public static let qring: WatchDialect = {
        var dialect = WatchDialect(
            name: .qring, summary: "QRing smart rings (Colmi R02–R12, Yawell): 16-byte packets, sleep as big data", gatt: .qring,
            captureDecoder: QRingCaptureDecoder(), makeCentral: { QRingWatch(transport: $0, configuration: $1) })
        dialect.identification = .qring
        dialect.centralTimes = QRingCentralTimes()
        return dialect
    }()
}

extension DialectIdentification {
    /// QRing: Device Information's strings and a battery request (command 0x03) on the ring's command pair.
    public static let qring = DialectIdentification(asks: "battery (command 0x03)") { transport, configuration in
        let ring = QRingWatch(transport: transport, configuration: configuration.identifying)
        let info: DeviceInfo
        let battery: BatteryStatus
        do {
            info = try await ring.connect()
            battery = try await ring.battery()
        } catch {
            await ring.disconnect()
            throw error
        }
        await ring.disconnect()
        return DialectIdentity(dialect: .qring, asked: "battery (command 0x03)", model: info.model, firmware: info.firmware,
                               detail: "battery \(battery.level) %")
    }
}
