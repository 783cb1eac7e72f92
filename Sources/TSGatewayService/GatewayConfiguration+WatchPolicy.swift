import TSWatchService

// Apart from the configuration's reader so that the reader builds without the watch service
// (scripts/fuzz compiles it alone, with Yams).
extension GatewayConfiguration {
    /// The watch service's policy from this file.
    public var watchPolicy: WatchPolicy {
        var policy = WatchPolicy(timeZone: timeZone, statisticsRule: statisticsRule)
        policy.firstSyncDays = firstSyncDays
        return policy
    }
}
