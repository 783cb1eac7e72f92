import Foundation
import TSModels

/// Timeouts and policies of the central side (wire-protocol.md §4).
public struct WatchConfiguration: Sendable {
    public var requestTimeout: Duration = .milliseconds(2000)
    /// Retransmissions of a request after the first attempt.
    public var requestRetries = 3
    /// Sleep pages in flight asked for in SLEEP_QUERY.
    public var window: UInt8 = 8
    /// With no page for this long, ask for a retransmission.
    public var pageIdleTimeout: Duration = .milliseconds(2000)
    public var pageIdleRetries = 5
    public var syncTimeOnConnect = true
    public var timeZone: TimeZone = .current
    /// The wall clock used for TIME_SET (tests fix it so captures replay byte for byte).
    public var now: @Sendable () -> Date = { Date() }
    /// This connect pairs: it asks the watch to accept the gateway (a bind), which
    /// the wearer may have to confirm on the watch. Otherwise a central logs in as paired before.
    public var pairing = false
    /// The secret the watch takes for pairing, for a dialect that takes one
    /// (`WatchDialect.credential`: an auth code, an auth key).
    public var pairingSecret: PairingSecret?
    /// Told, with what the wearer should do, when the watch may be waiting for the wearer to
    /// confirm a pairing.
    public var confirmationNeeded: (@Sendable (String) -> Void)?
    /// Told, in a line each, what the central wrote and each notification that arrived: on which
    /// characteristic, and which waiting request it went to or that none took it (`-v` prints them).
    public var traffic: (@Sendable (String) -> Void)?

    /// How long a request that is not sent again waits for its answer after its write's response
    /// (a request whose answer has no sequence to match it by): the time a request that is sent again is given over
    /// all its attempts. A band's answer may come well after the write's response: bluetoothd
    /// acknowledges a write request to a characteristic that also takes write commands as it
    /// hands the write to the band, before the band has read it.
    public var singleAttemptTimeout: Duration { requestTimeout * (1 + max(0, requestRetries)) }

    public init() {}
}
