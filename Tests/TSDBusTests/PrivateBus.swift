import Foundation
import Testing

/// A dbus-daemon of the test's own, on a socket in a temporary directory; never the host's buses.
final class PrivateBus: @unchecked Sendable {
    let address: String
    private let daemon: Process
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        let socket = directory.appendingPathComponent("bus.socket").path
        try Data("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.utf8).write(to: config)
        address = "unix:path=\(socket)"
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(config.path)", "--nofork", "--nopidfile"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
        guard FileManager.default.fileExists(atPath: socket) else {
            stop()
            throw BusTestError("dbus-daemon did not create \(socket)")
        }
    }

    /// Kills the daemon: every connection to it breaks.
    func stop() {
        // Process.waitUntilExit can stall on a concurrency thread; poll instead.
        if daemon.isRunning {
            kill(daemon.processIdentifier, SIGKILL)
            for _ in 0..<300 where daemon.isRunning { usleep(10_000) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

struct BusTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
