import Foundation
import TSModels
import TSTransport

/// A dialect's harmless identification exchange (`tsgateway probe`): it asks a watch offering the
/// dialect's service who it is, in that dialect, and changes nothing on it — no clock, no
/// pairing, no login that could turn into a bind, no setting. The link is closed again after.
public struct DialectIdentification: Sendable {
    /// The exchange in the dialect's own terms, for the probe's output ("HELLO, then DEVICE_INFO").
    public var asks: String
    public var run: @Sendable (any WatchTransport, WatchConfiguration) async throws -> DialectIdentity

    public init(asks: String, run: @escaping @Sendable (any WatchTransport, WatchConfiguration) async throws -> DialectIdentity) {
        self.asks = asks
        self.run = run
    }
}

/// What a watch answered to a dialect's identification exchange.
public struct DialectIdentity: Sendable, Hashable, Codable {
    public var dialect: Dialect
    /// The exchange that was answered (`DialectIdentification.asks`).
    public var asked: String
    public var model: String
    public var firmware: String
    /// What else the answer said, in words ("battery 80 %").
    public var detail: String?

    public init(dialect: Dialect, asked: String, model: String, firmware: String, detail: String? = nil) {
        self.dialect = dialect
        self.asked = asked
        self.model = model
        self.firmware = firmware
        self.detail = detail
    }
}

extension WatchConfiguration {
    /// The configuration an identification exchange runs with: the clock left alone, nothing
    /// negotiated beyond what identifies the watch, no pairing. Package-wide: each family's identification runs with it.
    package var identifying: WatchConfiguration {
        var quiet = self
        quiet.syncTimeOnConnect = false
        quiet.pairing = false
        quiet.pairingSecret = nil
        return quiet
    }
}
