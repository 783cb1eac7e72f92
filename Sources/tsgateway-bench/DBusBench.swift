import CDBus
import Foundation
import TSModels
import TSDBus

/// Method-call round trips per second through TSDBus against a plain blocking libdbus loop
/// (dbus_connection_send_with_reply_and_block) to the same exported method, on a private bus.
func runDBusBenchmarks() async throws {
    let bus = try BenchBus()
    defer { bus.stop() }
    let address = bus.address

    let server = try BusConnection(.address(address))
    defer { server.close() }
    try await server.requestName("org.tsgateway.Bench")
    try server.export(path: "/bench", interfaces: [DBusInterface("org.tsgateway.Bench", methods: [
        DBusMethod("Echo", in: "s", out: "s") { arguments, _ in arguments },
    ])])
    let client = try BusConnection(.address(address))
    defer { client.close() }

    let calls = 5000
    let swiftStart = ContinuousClock.now
    for index in 0..<calls {
        let reply = try await client.call(destination: "org.tsgateway.Bench", path: "/bench", interface: "org.tsgateway.Bench", member: "Echo", [.string("ping \(index)")])
        guard reply.first?.stringValue == "ping \(index)" else { throw BenchFailure("wrong echo \(reply)") }
    }
    let swiftSeconds = (ContinuousClock.now - swiftStart).timeInterval

    // Baseline: a raw libdbus connection, one blocking call after another.
    var error = DBusError()
    dbus_error_init(&error)
    guard let raw = dbus_connection_open_private(address, &error), dbus_bus_register(raw, &error) != 0 else {
        throw BenchFailure("baseline connection failed")
    }
    defer { dbus_connection_close(raw); dbus_connection_unref(raw) }
    let rawStart = ContinuousClock.now
    for index in 0..<calls {
        guard let message = dbus_message_new_method_call("org.tsgateway.Bench", "/bench", "org.tsgateway.Bench", "Echo") else { throw BenchFailure("no message") }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        "ping \(index)".withCString { text in
            var pointer: UnsafePointer<CChar>? = text
            _ = withUnsafePointer(to: &pointer) { dbus_message_iter_append_basic(&iterator, Int32(UInt8(ascii: "s")), UnsafeRawPointer($0)) }
        }
        let reply = dbus_connection_send_with_reply_and_block(raw, message, 5000, &error)
        dbus_message_unref(message)
        guard let reply else { throw BenchFailure("baseline call failed") }
        dbus_message_unref(reply)
    }
    let rawSeconds = (ContinuousClock.now - rawStart).timeInterval
    let swiftRate = Double(calls) / swiftSeconds, rawRate = Double(calls) / rawSeconds
    print("""
        \(calls) Echo(s) round trips on a private bus, server exported by TSDBus
          TSDBus async calls:          \(formatRate(swiftRate, unit: " calls"))
          blocking libdbus loop:       \(formatRate(rawRate, unit: " calls"))
          ratio TSDBus/blocking:       \(String(format: "%.3f", swiftRate / rawRate))
        """)
}

/// A dbus-daemon of the bench's own, on a socket in a temporary directory.
final class BenchBus: @unchecked Sendable {
    let address: String
    private let daemon = Process()
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bench-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let config = directory.appendingPathComponent("bus.conf")
        try Data("""
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.utf8).write(to: config)
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(config.path)", "--nofork", "--nopidfile"]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
        usleep(50_000)
        address = "unix:path=\(socket)"
    }

    /// For child processes: this bus as their system bus.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        environment.removeValue(forKey: "TSGATEWAY_BUS")
        return environment
    }

    func stop() {
        kill(daemon.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
