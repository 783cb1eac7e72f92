import Foundation

/// Where the gateway reads the wall clock: the system's, or one a test steps. It is read for
/// what is stamped with the time of day (a sync's range end, a watch's clock, the time of an
/// event); schedules run on the monotonic `ContinuousClock`, so a step of this clock (NTP's
/// first answer) moves none of them.
public struct WallClock: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) { self.now = now }

    public static let system = WallClock { Date() }
}
