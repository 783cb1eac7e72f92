import Foundation
import Logging
import TSDevice
@testable import TSGatewayService
import TSModels
import TSStore
import Testing

/// A front door's request that comes while the supervisor's own connect is still in its handshake.
@Suite("a request during the supervisor's connect")
struct SupervisorConnectRaceTests {
    @Test("info asked while the link is open but the handshake is not done waits for the connect and answers")
    func infoDuringTheHandshakeJoinsTheConnect() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-race-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Every packet 40 ms late: the NPK handshake (login, device info, time) takes a few hundred ms.
        var configuration = try GatewayConfiguration.parse("watches:\n  - simulated: true\n    dialect: npk\n    packet-delay: 40ms\n", file: "race.yaml")
        configuration.database = directory.appendingPathComponent("db.sqlite").path
        let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "race"))
        let supervisor = try #require(try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database)).first)
        let connecting = Task { try await supervisor.ensureConnected() }
        // The moment the link is open and the watch not yet described.
        let deadline = ContinuousClock.now + .seconds(60)
        while await !supervisor.watch.isConnected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(await supervisor.watch.info == nil, "the handshake was already done: the test did not meet the moment it is about")
        let info = try await supervisor.info()
        #expect(info.model == "NPK Simulator")
        try await connecting.value
        await supervisor.watch.disconnect()
    }
}
