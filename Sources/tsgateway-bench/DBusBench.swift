import CDBus
import Foundation
import TSModels
import TSDBus

/// Method-call round trips through TSDBus against a plain blocking libdbus loop
/// (dbus_connection_send_with_reply_and_block) to the same method, on a private bus. The
/// server is a child process (this binary with `--dbus-echo-server`), so the bench process's
/// CPU time (getrusage) is the client's alone. Rounds alternate between the two clients; the
/// fastest round of each and its CPU per call are reported.
func runDBusBenchmarks() async throws {
    let bus = try BenchBus()
    defer { bus.stop() }
    let server = try EchoServer(bus: bus)
    defer { server.stop() }
    let client = try BusConnection(.address(bus.address))
    defer { client.close() }
    try await server.waitUntilServing(client)
    let blocking = try BlockingClient(address: bus.address)
    defer { blocking.close() }

    let calls = 3000, rounds = 3
    var pooled: [ClientRound] = [], onLoop: [ClientRound] = [], blockingRounds: [ClientRound] = []
    let executor = client.executor
    _ = try await measureRound(calls: 200, bus: bus, server: server) { index in try await echo(client, index) }
    _ = try await measureRound(calls: 200, bus: bus, server: server) { index in try blocking.echo(index) }
    var growth = 0
    for _ in 0..<rounds {
        let before = currentResidentKiB(getpid())
        pooled.append(try await measureRound(calls: calls, bus: bus, server: server) { index in try await echo(client, index) })
        onLoop.append(try await withTaskExecutorPreference(executor) {
            try await measureRound(calls: calls, bus: bus, server: server) { index in try await echo(client, index) }
        })
        growth += currentResidentKiB(getpid()) - before
        blockingRounds.append(try await measureRound(calls: calls, bus: bus, server: server) { index in try blocking.echo(index) })
    }
    let raw = blockingRounds.max { $0.rate < $1.rate }!, rawCPU = blockingRounds.map(\.clientMicroseconds).min()!
    func micro(_ value: Double) -> String { String(format: "%.1f µs", value) }
    func line(_ label: String, _ rounds: [ClientRound]) -> String {
        let best = rounds.max { $0.rate < $1.rate }!, cpu = rounds.map(\.clientMicroseconds).min()!
        return """
              \(label.padding(toLength: 39, withPad: " ", startingAt: 0))\(formatRate(best.rate, unit: " calls")) = \(String(format: "%.3f", best.rate / raw.rate)) × blocking (goal ≥ 0.9); \
            client CPU \(micro(cpu))/call = \(String(format: "%.2f", cpu / rawCPU)) × blocking (goal ≤ 1.5) (user \(micro(best.userMicroseconds)), \
            sys \(micro(best.systemMicroseconds))); \(String(format: "%.1f", best.contextSwitches)) context switches/call; \
            server \(micro(best.serverMicroseconds)), dbus-daemon \(micro(best.busMicroseconds))
            """
    }
    print("""
        Echo(s) round trips on a private bus, the server (TSDBus) in a child process; \(rounds) alternating rounds of \(calls) calls, \
        fastest round and least client CPU (getrusage) per variant; server and dbus-daemon CPU from /proc (10 ms ticks)
        \(line("TSDBus, caller on the global pool", pooled))
        \(line("TSDBus, caller on connection.executor", onLoop))
          blocking libdbus loop:                 \(formatRate(raw.rate, unit: " calls")); client CPU \(micro(rawCPU))/call (user \(micro(raw.userMicroseconds)), \
        sys \(micro(raw.systemMicroseconds))); \(String(format: "%.1f", raw.contextSwitches)) context switches/call; \
        server \(micro(raw.serverMicroseconds)), dbus-daemon \(micro(raw.busMicroseconds))
          client RSS growth over the \(2 * rounds * calls) TSDBus calls: \(growth) KiB
        """)
}

private func echo(_ client: BusConnection, _ index: Int) async throws {
    let reply = try await client.call(destination: "org.tsgateway.Bench", path: "/bench", interface: "org.tsgateway.Bench", member: "Echo", [.string("ping \(index)")])
    guard reply.first?.stringValue == "ping \(index)" else { throw BenchFailure("wrong echo \(reply)") }
}

struct ClientRound {
    var rate: Double
    var userMicroseconds: Double
    var systemMicroseconds: Double
    var clientMicroseconds: Double { userMicroseconds + systemMicroseconds }
    var serverMicroseconds: Double
    var busMicroseconds: Double
    var contextSwitches: Double
}

private func measureRound(calls: Int, bus: BenchBus, server: EchoServer, _ call: (Int) async throws -> Void) async throws -> ClientRound {
    let usageBefore = ProcessUsage.ofSelf(), serverBefore = ProcessUsage.ofProcess(server.pid), busBefore = ProcessUsage.ofProcess(bus.daemonPID)
    let start = ContinuousClock.now
    for index in 0..<calls { try await call(index) }
    let seconds = (ContinuousClock.now - start).timeInterval
    let usage = ProcessUsage.ofSelf() - usageBefore
    let perCall = 1e6 / Double(calls)
    return ClientRound(rate: Double(calls) / seconds, userMicroseconds: usage.userSeconds * perCall, systemMicroseconds: usage.systemSeconds * perCall,
                       serverMicroseconds: (ProcessUsage.ofProcess(server.pid) - serverBefore).cpuSeconds * perCall,
                       busMicroseconds: (ProcessUsage.ofProcess(bus.daemonPID) - busBefore).cpuSeconds * perCall,
                       contextSwitches: Double(usage.contextSwitches) / Double(calls))
}

/// CPU time and context switches of a process.
struct ProcessUsage {
    var userSeconds: Double
    var systemSeconds: Double
    var contextSwitches: Int
    var cpuSeconds: Double { userSeconds + systemSeconds }

    static func ofSelf() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessUsage(userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime), contextSwitches: usage.ru_nvcsw + usage.ru_nivcsw)
    }

    /// From /proc/PID/stat (clock ticks); zero when the process is gone.
    static func ofProcess(_ pid: Int32) -> ProcessUsage {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards) else { return ProcessUsage(userSeconds: 0, systemSeconds: 0, contextSwitches: 0) }
        // Fields from the state on: state is field 3, utime field 14, stime field 15.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return ProcessUsage(userSeconds: 0, systemSeconds: 0, contextSwitches: 0)
        }
        return ProcessUsage(userSeconds: user / ticks, systemSeconds: system / ticks, contextSwitches: 0)
    }

    static func - (lhs: ProcessUsage, rhs: ProcessUsage) -> ProcessUsage {
        ProcessUsage(userSeconds: lhs.userSeconds - rhs.userSeconds, systemSeconds: lhs.systemSeconds - rhs.systemSeconds,
                     contextSwitches: lhs.contextSwitches - rhs.contextSwitches)
    }
}

/// The baseline: a raw libdbus connection, one blocking call after another.
final class BlockingClient {
    private let raw: OpaquePointer

    init(address: String) throws {
        var error = DBusError()
        dbus_error_init(&error)
        guard let raw = dbus_connection_open_private(address, &error), dbus_bus_register(raw, &error) != 0 else {
            throw BenchFailure("baseline connection failed")
        }
        self.raw = raw
    }

    func echo(_ index: Int) throws {
        guard let message = dbus_message_new_method_call("org.tsgateway.Bench", "/bench", "org.tsgateway.Bench", "Echo") else { throw BenchFailure("no message") }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        "ping \(index)".withCString { text in
            var pointer: UnsafePointer<CChar>? = text
            _ = withUnsafePointer(to: &pointer) { dbus_message_iter_append_basic(&iterator, Int32(UInt8(ascii: "s")), UnsafeRawPointer($0)) }
        }
        var error = DBusError()
        dbus_error_init(&error)
        let reply = dbus_connection_send_with_reply_and_block(raw, message, 5000, &error)
        dbus_message_unref(message)
        guard let reply else { throw BenchFailure("baseline call failed") }
        var readIterator = DBusMessageIter()
        var text: UnsafePointer<CChar>?
        if dbus_message_iter_init(reply, &readIterator) != 0, dbus_message_iter_get_arg_type(&readIterator) == Int32(UInt8(ascii: "s")) {
            withUnsafeMutablePointer(to: &text) { dbus_message_iter_get_basic(&readIterator, UnsafeMutableRawPointer($0)) }
        }
        let echoed = text.map { String(cString: $0) }
        dbus_message_unref(reply)
        guard echoed == "ping \(index)" else { throw BenchFailure("baseline: wrong echo") }
    }

    func close() {
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }
}

/// VmRSS of a process in KiB; 0 when unreadable.
func currentResidentKiB(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
}

/// This binary as the Echo server, in a child process.
final class EchoServer {
    private let process = Process()
    var pid: Int32 { process.processIdentifier }

    static let argument = "--dbus-echo-server"

    init(bus: BenchBus) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = [Self.argument, bus.address]
        try process.run()
    }

    func waitUntilServing(_ probe: BusConnection) async throws {
        for _ in 0..<500 {
            if try await probe.nameHasOwner("org.tsgateway.Bench") { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchFailure("the echo server did not take its name within 5 s")
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The child's side: serves Echo(s) until killed.
    static func serve(address: String) async throws -> Never {
        let server = try BusConnection(.address(address))
        try server.export(path: "/bench", interfaces: [DBusInterface("org.tsgateway.Bench", methods: [
            DBusMethod("Echo", in: "s", out: "s") { arguments, _ in arguments },
        ])])
        try await server.requestName("org.tsgateway.Bench")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// A dbus-daemon of the bench's own, on a socket in a temporary directory.
final class BenchBus: @unchecked Sendable {
    let address: String
    private let daemon = Process()
    private let directory: URL
    var daemonPID: Int32 { daemon.processIdentifier }

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
