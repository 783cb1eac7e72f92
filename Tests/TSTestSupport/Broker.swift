import Foundation

/// A Mosquitto broker of the test's own on a free local port, with persistence in its directory.
public final class Broker: @unchecked Sendable {
    public let port: Int
    public let directory: URL
    private var process: SpawnedProcess?

    /// `users`: user → password; the broker then refuses anonymous clients.
    public init(users: [String: String] = [:], tls: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-mqtt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Started as root, mosquitto drops to its own user, which must still write its files here.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        port = try Self.freePort()
        let passwords = directory.appendingPathComponent("passwords")
        for (user, password) in users {
            let tool = Process()
            tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            tool.arguments = ["-b"] + (FileManager.default.fileExists(atPath: passwords.path) ? [] : ["-c"]) + [passwords.path, user, password]
            try tool.run()
            tool.waitPolling()
            guard tool.terminationStatus == 0 else { throw BusTestError("mosquitto_passwd failed") }
        }
        if !users.isEmpty { try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: passwords.path) }
        var tlsLines = ""
        if tls {
            // A CA of the test's own and a server certificate for 127.0.0.1, made with openssl.
            let d = directory.path
            for arguments in [
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=tsgateway test CA", "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.crt"],
                ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr"],
                ["x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.crt", "-CAkey", "\(d)/ca.key", "-CAcreateserial", "-days", "2",
                 "-extfile", "\(d)/san.cnf", "-out", "\(d)/server.crt"],
            ] {
                try Data("subjectAltName = IP:127.0.0.1\n".utf8).write(to: directory.appendingPathComponent("san.cnf"))
                let tool = Process()
                tool.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
                tool.arguments = arguments
                tool.standardOutput = FileHandle.nullDevice
                tool.standardError = FileHandle.nullDevice
                try tool.run()
                tool.waitPolling()
                guard tool.terminationStatus == 0 else { throw BusTestError("openssl \(arguments[0]) failed") }
            }
            for file in ["ca.crt", "server.crt", "server.key"] {
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(d)/\(file)")
            }
            tlsLines = "cafile \(d)/ca.crt\ncertfile \(d)/server.crt\nkeyfile \(d)/server.key"
        }
        try Data("""
            listener \(port) 127.0.0.1
            \(tlsLines)
            allow_anonymous \(users.isEmpty)
            \(users.isEmpty ? "" : "password_file \(passwords.path)")
            persistence true
            persistence_location \(directory.path)/
            log_dest file \(directory.path)/broker.log
            """.utf8).write(to: directory.appendingPathComponent("mosquitto.conf"))
        try start()
    }

    /// Spawned with signals at their defaults and none blocked (`Spawn`): a child started from a
    /// test thread would otherwise inherit blocked signals, and SIGTERM would never reach the broker.
    public func start() throws {
        process = try Spawn.start("/usr/sbin/mosquitto", arguments: ["-c", directory.appendingPathComponent("mosquitto.conf").path],
                                  stdout: .null, stderr: .file(directory.appendingPathComponent("stderr.log").path))
        for _ in 0..<300 where !Self.accepts(port) { usleep(10_000) }
        guard Self.accepts(port) else { throw BusTestError("mosquitto did not listen on port \(port)") }
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// SIGTERM: the broker saves its sessions and queued messages, as a service restart would.
    public func stop() {
        process?.stop(grace: .seconds(5))
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BusTestError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
