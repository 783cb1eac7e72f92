import Foundation

/// A dbus-daemon of the test's own, on a socket in a temporary directory; never the host's buses.
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    private let daemon: SpawnedProcess
    /// A directory of the test's own, removed with the bus.
    public let directory: URL

    /// `includingPolicy`: a bus policy file (such as udev/org.tsgateway.conf) applied after a
    /// permissive default, as on a system bus; the socket is then open to every user.
    public init(includingPolicy policy: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        let socket = directory.appendingPathComponent("bus.socket").path
        let rules = policy == nil ? """
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
            """ : """
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow receive_type="*"/>
                <allow send_requested_reply="false" send_type="method_return"/>
                <allow send_requested_reply="false" send_type="error"/>
            """
        try Data("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(policy == nil ? "session" : "system")</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
            \(rules)
              </policy>
            \(policy.map { "  <include>\($0)</include>" } ?? "")
            </busconfig>
            """.utf8).write(to: config)
        if policy != nil { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path) }
        address = "unix:path=\(socket)"
        daemon = try Spawn.start("/usr/bin/dbus-daemon", arguments: ["--config-file=\(config.path)", "--nofork", "--nopidfile"],
                                 stdout: .null, stderr: .null)
        // The socket file appears at bind(), before listen(): ready means a connect succeeds.
        for _ in 0..<500 where !Self.accepts(socket) { usleep(10_000) }
        guard Self.accepts(socket) else {
            stop()
            throw BusTestError("dbus-daemon did not create \(socket)")
        }
    }

    /// True when a unix-socket connect to `path` succeeds.
    public static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
            buffer[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Kills the daemon: every connection to it breaks.
    public func stop() {
        daemon.signal(SIGKILL)
        daemon.wait(timeout: .seconds(3))
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

public struct BusTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
