import Foundation
import Logging
import TSModels
import TSStore
import TSWatchService

/// The daemon's view of the system clock, shared by its supervisors: asked before a watch's
/// clock is set and before a scheduled sync (whose range ends at "now"). While the clock is not
/// trusted the supervisors ask again every `GatewayConfiguration.clockCheckInterval`, and set
/// the clocks as soon as it is. Logs each change of verdict once, for the whole gateway.
public actor ClockDiscipline {
    let source: any ClockEvidenceSource
    let logger: Logger
    private var lastVerdict: ClockTrust?

    public init(source: any ClockEvidenceSource, logger: Logger) {
        self.source = source
        self.logger = logger
    }

    /// The machine's evidence: timedated is asked only by a daemon on the system bus (on a
    /// session bus it is a test's or a developer's, and the host's buses are not theirs).
    public static func system(store: GatewayStore, configuration: GatewayConfiguration, logger: Logger) -> ClockDiscipline {
        ClockDiscipline(source: SystemClockEvidence(store: store, timedatedBus: configuration.bus == .system ? .system : nil), logger: logger)
    }

    /// The verdict now. Evidence that cannot be had (a bad `TSGATEWAY_CLOCK`, refused at start)
    /// counts as not trusted.
    public func check() async -> ClockTrust {
        let verdict: ClockTrust
        do {
            verdict = try await source.trust()
        } catch {
            verdict = .untrusted(ClockDistrust(.asserted, now: Date()))
            logger.error("the system clock's state cannot be read: \(error)")
        }
        switch (lastVerdict?.isTrusted, verdict) {
        case (true?, .untrusted(let distrust)), (nil, .untrusted(let distrust)):
            logger.notice("\(distrust.why): no watch's clock is set from it, and scheduled syncs wait, until it is trusted (set \(SystemClockEvidence.environmentKey)=trusted to trust it as it is)")
        case (false?, .trusted(let reason)):
            logger.notice("the system clock is trusted now (\(reason.rawValue)): setting the watches' clocks")
        default:
            break
        }
        lastVerdict = verdict
        return verdict
    }
}
