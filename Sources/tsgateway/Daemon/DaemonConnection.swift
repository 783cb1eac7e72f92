import TSGatewayAPI

/// The running daemon, for commands that only make sense with it.
enum DaemonConnection {
    static func require() async throws -> GatewayClient {
        guard let client = await GatewayClient.ifRunning() else {
            let bus = GatewayClient.preferredBusName()
            throw CLIFailure("tsgateway serve is not running on the \(bus) bus (start it: sudo systemctl start tsgateway; "
                             + "for a development daemon on the session bus set TSGATEWAY_BUS=session)", status: .unavailable)
        }
        return client
    }

    static func call<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw CLIFailure.from(error) }
    }
}
