import Foundation
import TSModels
import TSTransport

/// One dialect as the gateway knows it: its name, its GATT profile and the central that speaks it. A dialect's module defines one of these; its
/// family (`WatchFamily`, TSFamilies) carries it, and the family's line in `WatchFamilies.builtIn` is its one registration.
public struct WatchDialect: Sendable {
    public var name: Dialect
    /// One line for `--help` and the documentation.
    public var summary: String
    /// Where its frames go (BlueZ opens it, `scan` looks for it); nil for a dialect of standard services only.
    public var gatt: GATTProfile?
    /// A watch offering `gatt`'s service speaks this dialect. False where other protocols use
    /// the same service (a chip vendor's service that other vendors' watches use too): such a
    /// watch's dialect is asked for (`--dialect`, `dialect:`) or remembered, never guessed.
    public var identifiedByService: Bool
    /// How its watches pair beyond Just Works: the secret they take (an auth code, an auth key), nil for none.
    public var credential: PairingCredential?
    /// What `info` says of its watches beyond their capabilities.
    public var presentation = DialectPresentation()
    /// Its harmless exchange that asks a watch offering `gatt`'s service who it is (`tsgateway
    /// probe`); nil: it has none (the standard services are read by the probe itself).
    public var identification: DialectIdentification?
    /// Reads its frames out of captured bytes (`protocol decode`); nil: it has no frames of its own.
    public var captureDecoder: (any CaptureDecoder)?
    /// Which fields of its central's requests are the central's clock or a sync's range, which a
    /// replay lets follow a running clock (`protocol replay`); nil: every write must be the recorded one.
    public var centralTimes: (any CentralTimeReader)?
    public var makeCentral: @Sendable (any WatchTransport, WatchConfiguration) -> any WatchCentral

    public init(name: Dialect, summary: String, gatt: GATTProfile?, identifiedByService: Bool = true, credential: PairingCredential? = nil,
                captureDecoder: (any CaptureDecoder)? = nil,
                makeCentral: @escaping @Sendable (any WatchTransport, WatchConfiguration) -> any WatchCentral) {
        self.name = name
        self.summary = summary
        self.gatt = gatt
        self.identifiedByService = identifiedByService
        self.credential = credential
        self.captureDecoder = captureDecoder
        self.makeCentral = makeCentral
    }

    /// The dialects whose exchange a capture can hold: a GATT profile and a capture decoder.
    public var capturable: (profile: GATTProfile, decoder: any CaptureDecoder)? {
        guard let gatt, let captureDecoder else { return nil }
        return (gatt, captureDecoder)
    }

    /// What the configuration reader and the command line need of it.
    public var terms: DialectTerms { DialectTerms(name: name, credential: credential) }

    /// The Bluetooth SIG's standard services only.
    public static let standardServices = WatchDialect(
        name: .standard, summary: "the Bluetooth SIG's standard services only (device information, battery, current time, heart rate)", gatt: nil,
        makeCentral: { StandardServicesWatch(transport: $0, configuration: $1) })
}

/// What `info` says of a dialect's watches beyond their capabilities.
public struct DialectPresentation: Sendable {
    /// Its watches report a sleep statistics rule of their own, worth a row.
    public var reportsSleepRule = false
    /// Its own GATT service is among the services the transport names (protocol v1's), so `info`
    /// need not add it.
    public var serviceListedByTransport = false
    /// What `info` says of smart wake when a watch has none of its parts.
    public var noSmartWake = "no"

    public init() {}
}

extension Dialect {
    /// The dialect whose central speaks to a watch no rule names (`DialectResolution` step 4):
    /// protocol v1's, which serves a watch found without its service through the standard services.
    public static var fallback: Dialect { .protocolV1 }
}

extension [WatchDialect] {
    /// The dialect called `name` among these, or an error that lists the ones there are.
    public func named(_ name: Dialect) throws(DialectError) -> WatchDialect {
        guard let found = first(where: { $0.name == name }) else { throw DialectError(name: name, known: map(\.name)) }
        return found
    }
}
