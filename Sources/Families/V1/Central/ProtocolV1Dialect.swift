import TSDevice
import TSModels
import TSProtocol

extension WatchDialect {
    /// Protocol v1 and v1.1, this project's own protocol (the simulator speaks it). Its central is
    /// also the one for a watch no rule names (`Dialect.fallback`): it serves a watch found without
    /// its service through the standard services.
    public static let protocolV1: WatchDialect = {
        var dialect = WatchDialect(
            name: .protocolV1, summary: "this project's open protocol v1 (and v1.1) on its own GATT service", gatt: .protocolV1,
            captureDecoder: ProtocolV1CaptureDecoder(), makeCentral: { Watch(transport: $0, configuration: $1) })
        dialect.presentation.reportsSleepRule = true
        dialect.presentation.serviceListedByTransport = true
        dialect.presentation.noSmartWake = "no (protocol v1 without the v1.1 alarm extensions)"
        dialect.identification = .protocolV1
        dialect.centralTimes = ProtocolV1CentralTimes()
        return dialect
    }()
}

extension DialectIdentification {
    /// Protocol v1: HELLO and DEVICE_INFO (wire-protocol.md), the two requests every connect
    /// starts with; no EXTENSIONS (nothing negotiated beyond what identifies the watch).
    public static let protocolV1 = DialectIdentification(asks: "HELLO, then DEVICE_INFO") { transport, configuration in
        let watch = Watch(transport: transport, configuration: configuration.identifying, extensions: [])
        let info: DeviceInfo
        do { info = try await watch.connect() } catch {
            await watch.disconnect()
            throw error
        }
        await watch.disconnect()
        // Without its service the central falls back to the standard services: no answer in v1.
        guard info.dialect == .protocolV1 else { throw WatchError.unsupported("the protocol v1 service (the watch does not offer it)") }
        return DialectIdentity(dialect: .protocolV1, asked: "HELLO, then DEVICE_INFO", model: info.model, firmware: info.firmware,
                               detail: "up to \(info.capabilities.maxAlarms) alarms")
    }
}
