import Foundation
import TSModels
import TSDBus
import TSGatewayAPI

/// `tsgateway serve` as users run it: resident memory with 1 and 4 simulated watches connected
/// and idle, against an idle `tsgateway events` client of the same binary (the runtime's fixed
/// cost); and D-Bus calls served per second by several concurrent clients, against Peer.Ping
/// answered by the same daemon (the bus and dispatch alone).
func runDaemonBenchmarks() async throws {
    guard let binary = siblingExecutable("tsgateway") else {
        throw BenchFailure("tsgateway is not built beside tsgateway-bench; run `swift build -c release` first")
    }
    let bus = try BenchBus()
    defer { bus.stop() }

    var rss: [Int: Int] = [:]
    for watches in [1, 4] {
        let daemon = try await ServedGateway(binary: binary, bus: bus, watches: watches)
        defer { daemon.stop() }
        try await daemon.waitUntilConnectedAndSynced()
        try await Task.sleep(for: .seconds(3))
        rss[watches] = try residentKiB(daemon.pid)
        if watches == 4 {
            // The client's baseline: the same binary, connected to the bus and idle.
            let idle = Process()
            idle.executableURL = binary
            idle.arguments = ["events"]
            idle.environment = bus.environment
            idle.standardOutput = FileHandle.nullDevice
            idle.standardError = FileHandle.nullDevice
            try idle.run()
            try await Task.sleep(for: .seconds(2))
            let baseline = try residentKiB(idle.processIdentifier)
            kill(idle.processIdentifier, SIGKILL)
            let one = rss[1] ?? 0, four = rss[4] ?? 0
            print("""
                resident memory (VmRSS), watches connected and idle
                  serve, 1 watch:              \(one / 1024) MiB (\(one) KiB)
                  serve, 4 watches:            \(four / 1024) MiB (\(four) KiB); \((four - one) / 3) KiB per extra watch
                  idle `tsgateway events`:     \(baseline / 1024) MiB (\(baseline) KiB)
                  ratio serve(1)/idle client:  \(String(format: "%.2f", Double(one) / Double(baseline)))
                  ratio serve(4)/serve(1):     \(String(format: "%.2f", Double(four) / Double(one)))
                """)
            try await callsPerSecond(bus: bus)
        }
    }
}

/// Concurrent callers against the 4-watch daemon: Ping (baseline), a property read, GetAlarms.
private func callsPerSecond(bus: BenchBus) async throws {
    let clients = 4
    let duration: Duration = .seconds(3)
    let path = GatewayBusAPI.path(forWatch: try simulatedWatch(1))
    func rate(_ member: String, _ call: @escaping @Sendable (BusConnection, Int) async throws -> Void) async throws -> Double {
        let connections = try (0..<clients).map { _ in try BusConnection(.address(bus.address)) }
        defer { connections.forEach { $0.close() } }
        let started = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, connection) in connections.enumerated() {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now - started < duration {
                        // Each client works on its own watch, as separate programs would.
                        try await call(connection, index)
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (ContinuousClock.now - started).timeInterval
    }
    let ping = try await rate("Ping") { connection, _ in
        _ = try await connection.call(destination: GatewayBusAPI.busName, path: GatewayBusAPI.rootPath, interface: StandardBusNames.peer, member: "Ping")
    }
    let property = try await rate("Get") { connection, _ in
        _ = try await connection.call(destination: GatewayBusAPI.busName, path: path, interface: StandardBusNames.properties, member: "Get",
                                      [.string(GatewayBusAPI.watchInterface), .string(WatchStatusKey.connected.rawValue)])
    }
    let alarms = try await rate("GetAlarms") { connection, index in
        _ = try await connection.call(destination: GatewayBusAPI.busName, path: GatewayBusAPI.path(forWatch: try simulatedWatch(index + 1)),
                                      interface: GatewayBusAPI.watchInterface, member: WatchMethod.getAlarms.rawValue)
    }
    print("""
        D-Bus calls served by `tsgateway serve` (4 simulated watches, \(clients) concurrent clients, 3 s each)
          Peer.Ping (baseline):        \(formatRate(ping, unit: " calls"))
          Properties.Get Connected:    \(formatRate(property, unit: " calls")) = \(String(format: "%.2f", property / ping)) × Ping
          Watch2.GetAlarms (to watch): \(formatRate(alarms, unit: " calls")) = \(String(format: "%.3f", alarms / ping)) × Ping
        """)
}

/// A `tsgateway serve` child with simulated watches on the bench's bus.
private final class ServedGateway {
    let process = Process()
    let directory: URL
    let bus: BenchBus
    let watches: Int
    var pid: Int32 { process.processIdentifier }

    init(binary: URL, bus: BenchBus, watches: Int) async throws {
        self.bus = bus
        self.watches = watches
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-serve-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let list = (1...watches).map { "  - simulated: true\n    name: bench-\($0)\n    seed: \($0)\n    history-days: 30" }.joined(separator: "\n")
        let config = directory.appendingPathComponent("config.yaml")
        try Data("database: \(directory.path)/db.sqlite\nbus: system\nwatches:\n\(list)\n".utf8).write(to: config)
        process.executableURL = binary
        process.arguments = ["serve", "--config", config.path]
        process.environment = bus.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func waitUntilConnectedAndSynced() async throws {
        let probe = try BusConnection(.address(bus.address))
        defer { probe.close() }
        for _ in 0..<600 {
            var ready = 0
            for index in 1...watches {
                let path = GatewayBusAPI.path(forWatch: try simulatedWatch(index))
                let connected = try? await probe.call(destination: GatewayBusAPI.busName, path: path, interface: StandardBusNames.properties,
                                                      member: "Get", [.string(GatewayBusAPI.watchInterface), .string(WatchStatusKey.connected.rawValue)]).first?.boolValue
                let lastSync = try? await probe.call(destination: GatewayBusAPI.busName, path: path, interface: StandardBusNames.properties,
                                                     member: "Get", [.string(GatewayBusAPI.watchInterface), .string(WatchStatusKey.lastSync.rawValue)]).first?.int64Value
                if connected == true, (lastSync ?? 0) > 0 { ready += 1 }
            }
            if ready == watches { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchFailure("tsgateway serve did not connect and sync its \(watches) watches within 30 s")
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        for _ in 0..<500 where process.isRunning { usleep(10_000) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// VmRSS of a process, in KiB.
private func residentKiB(_ pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
        throw BenchFailure("no VmRSS for process \(pid)")
    }
    return kib
}

/// An executable in the same build directory as this one.
func siblingExecutable(_ name: String) -> URL? {
    let candidate = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
    return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
}

/// The address the daemon's configuration gives its `index`th simulated watch.
private func simulatedWatch(_ index: Int) throws -> WatchID {
    guard let id = WatchID(String(format: "00:00:5E:00:54:%02X", index)) else { throw BenchFailure("no address for simulated watch \(index)") }
    return id
}
