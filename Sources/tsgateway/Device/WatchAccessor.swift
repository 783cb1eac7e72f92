import Foundation
import TSGatewayAPI
import TSWatchService

/// Which door a device command goes through to its watch: `tsgateway serve` when it runs and
/// serves the watch (its D-Bus API, behind which the same operations run), otherwise a link of
/// this process's own. Either way the command sees one `WatchAccess`.
enum WatchAccessor {
    /// Runs `body` on the watch the options name: through the daemon when it serves that
    /// watch, otherwise over a link of this process's own.
    static func run<T>(_ options: ConnectionOptions, _ body: (any WatchAccess) async throws -> T) async throws -> T {
        if !options.simulate, let client = await GatewayClient.ifRunning() {
            defer { client.close() }
            if let remote = try await daemonWatch(client, device: options.device) {
                options.makeLogger().info("\(remote.id) is served by tsgateway serve; going through its D-Bus API")
                do {
                    return try await body(remote)
                } catch {
                    throw CLIFailure.from(error)
                }
            }
        }
        return try await DeviceSession.run(options) { session in
            try await session.connect()
            return try await body(session.operations)
        }
    }

    /// The daemon's watch for `--device` (address or name), or its only watch; nil when the
    /// daemon does not serve the watch asked for.
    static func daemonWatch(_ client: GatewayClient, device: String?) async throws -> RemoteWatch? {
        do {
            let served = try await client.watches()
            guard !served.isEmpty else { return nil }
            let chosen = try WatchSelection.choose(device, among: served.map { WatchIdentity(id: $0.id, name: $0.name) })
            return chosen.map { client.watch($0.id) }
        } catch {
            throw CLIFailure.from(error)
        }
    }
}
