import Foundation
import Logging
import TSModels
import TSStore
import TSWatchService

/// The CLI's look at the system clock before it sets a watch's from it (`ClockTrust`): the
/// machine's evidence (timedated on the system bus, where BlueZ is), and the newest stamp in the
/// database the command uses.
enum ClockCheck {
    /// `simulate`: timedated is not asked (the simulated watch is a test's or a demo's, and the
    /// host's system bus is not theirs). Otherwise it is asked where BlueZ is: the system bus, or
    /// `TSGATEWAY_DBUS_ADDRESS` (tests, development).
    static func trust(databasePath: String?, simulate: Bool) async throws -> ClockTrust {
        let store = databasePath.flatMap { try? GatewayStore(path: $0) }
        let environment = ProcessInfo.processInfo.environment
        do {
            return try await SystemClockEvidence(store: store, asksTimedated: !simulate, environment: environment).trust()
        } catch {
            throw CLIFailure("\(error)", status: .usage)
        }
    }

    /// `time sync`: refuses (exit 75, with the reason and what to do) while the clock is not
    /// trusted, unless `force`.
    static func requireTrusted(_ options: ConnectionOptions, force: Bool) async throws {
        guard let distrust = try await trust(databasePath: options.databasePath, simulate: options.simulate).distrust else { return }
        guard force else { throw CLIFailure(distrust.description, status: .timeout) }
        options.makeLogger().warning("\(distrust.why); setting the watch's clock from it all the same (--force)")
    }
}
