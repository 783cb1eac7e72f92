import TSDevice
import TSGarmin
import TSModels

// The Garmin family's registration terms: its dialect's name, its `WatchDialect` and its identification exchange.

extension Dialect {
    /// Garmin watches over Multi-Link and GFDI (protocol-spec/garmin/garmin.md).
    public static let garmin = Dialect(rawValue: "garmin")
}

extension WatchDialect {
    /// Garmin watches: Forerunner, Fenix, Venu, Vívoactive, Instinct, Epix.
    public static let garmin: WatchDialect = {
        var dialect = WatchDialect(
            name: .garmin, summary: "Garmin watches (Forerunner, Fenix, Venu, Instinct…): GFDI over Multi-Link, sleep and heart rate as FIT files",
            gatt: .garmin, captureDecoder: GarminCaptureDecoder(), makeCentral: { GarminWatch(transport: $0, configuration: $1) })
        dialect.identification = .garmin
        dialect.centralTimes = GarminCentralTimes()
        return dialect
    }()
}

extension DialectIdentification {
    /// Garmin: the watch's own DEVICE_INFORMATION, which it sends once GFDI is registered.
    public static let garmin = DialectIdentification(asks: "DEVICE_INFORMATION (GFDI 5024)") { transport, configuration in
        let watch = GarminWatch(transport: transport, configuration: configuration.identifying)
        let info: DeviceInfo
        do { info = try await watch.connect() } catch {
            await watch.disconnect()
            throw error
        }
        let unit = await watch.watchInformation?.unit
        await watch.disconnect()
        return DialectIdentity(dialect: .garmin, asked: "DEVICE_INFORMATION (GFDI 5024)", model: info.model, firmware: info.firmware,
                               detail: unit.map { "unit \($0)" })
    }
}
