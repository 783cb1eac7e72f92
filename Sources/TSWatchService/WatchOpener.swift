import Foundation
import TSBlueZ
import TSBlueZTransport
import TSDevice
import TSModels
import TSTransport

/// How the gateway reaches one watch.
public enum WatchLinkDescription: Sendable {
    /// A real watch over BlueZ.
    case bluetooth(BluetoothLink, bluez: BlueZ)
    /// A recorded capture played back to the central of the dialect asked for (protocol v1 when none is).
    case replay([CaptureEntry])
    /// A link the caller made (a simulated watch of TSFamilies, a test's own peripheral, a tool).
    case transport(any WatchTransport)
}

/// A watch opened in its dialect.
public struct OpenedWatch: Sendable {
    public var central: any WatchCentral
    /// The BlueZ link of a real watch; nil otherwise.
    public var bluetooth: BluetoothLink?
}

/// The one place a watch is opened: the CLI, `pair` and `tsgateway serve` describe the link
/// and get the central of its dialect.
public enum WatchOpener {
    /// Opens nothing yet (the central connects when asked) in the dialect chosen: the one asked
    /// for (`dialect:` in the configuration, `--dialect`) or resolved (`resolveDialect`).
    public static func open(_ link: WatchLinkDescription, dialect: WatchDialect, configuration: WatchConfiguration = WatchConfiguration(),
                            onStep: (@Sendable (BlueZTransport.OpenStep) -> Void)? = nil) -> OpenedWatch {
        switch link {
        case let .bluetooth(bluetooth, bluez):
            var transport = BlueZTransport(bluez: bluez, address: bluetooth.address.rawValue, adapter: bluetooth.adapter, profile: dialect.gatt)
            transport.onStep = onStep
            return OpenedWatch(central: dialect.makeCentral(transport, configuration), bluetooth: bluetooth)
        case let .replay(capture):
            return OpenedWatch(central: dialect.makeCentral(ReplayTransport(capture: capture, centralTimes: dialect.centralTimes), configuration))
        case let .transport(transport):
            return OpenedWatch(central: dialect.makeCentral(transport, configuration))
        }
    }

    /// The dialect of a watch over BlueZ by `DialectResolution`'s rules; the GATT services are
    /// the UUIDs BlueZ lists for the device (it knows them from advertisements or an earlier
    /// connect; a device BlueZ has not seen offers none, and protocol v1's central decides once
    /// connected).
    public static func resolveDialect(for link: BluetoothLink, bluez: BlueZ, asked: Dialect?, remembered: Dialect?, among dialects: [WatchDialect]) async throws
        -> (dialect: WatchDialect, reason: DialectResolution.Reason) {
        var services: [String] = []
        if asked == nil && remembered == nil {
            services = (try? await bluez.serviceUUIDs(address: link.address.rawValue, adapter: link.adapter)) ?? []
        }
        return try DialectResolution.resolve(asked: asked, remembered: remembered, serviceUUIDs: services, among: dialects)
    }
}
