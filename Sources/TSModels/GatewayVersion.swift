import Foundation

/// The release of tsgateway: `tsgateway --version`, the daemon's D-Bus `Version` property and the
/// gateway's device in Home Assistant all say this.
public enum GatewayVersion {
    public static let current = "0.3.0"

    /// No build of this source is older than this day (UTC): a system clock earlier than it is
    /// wrong (`ClockTrust`). Moved forward with each release; never past the day it is committed.
    public static let sourceDate = Date(timeIntervalSince1970: 1_795_651_200) // 2026-11-26T00:00:00Z
}
