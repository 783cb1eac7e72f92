import CTimex
import Foundation
import Glibc
import TSDBus
import TSModels
import TSStore

/// Where the evidence about the system clock comes from (`ClockTrust.decide` judges it): the
/// machine's own (`SystemClockEvidence`), or a test's.
public protocol ClockEvidenceSource: Sendable {
    /// Fails only on a `TSGATEWAY_CLOCK` that says neither trusted nor untrusted.
    func evidence() async throws -> ClockEvidence
}

extension ClockEvidenceSource {
    public func trust() async throws -> ClockTrust { ClockTrust.decide(try await evidence()) }
}

/// The evidence this machine gives: `TSGATEWAY_CLOCK`, the kernel's NTP status (adjtimex),
/// timedated's `NTPSynchronized` and `NTP` on the system bus, the time-sync services' files
/// under /run, this build's date and the newest stamp in the store.
public struct SystemClockEvidence: ClockEvidenceSource {
    public static let environmentKey = "TSGATEWAY_CLOCK"

    /// The store whose newest stamp is a floor; nil: no such floor.
    public var store: GatewayStore?
    /// The bus timedated is asked on; nil: not asked (a daemon on a session bus, tests: the
    /// host's buses are not theirs to touch).
    public var timedatedBus: BusConnection.Bus?
    public var environment: [String: String]
    /// Where the services' runtime files are (tests point it into a directory of their own).
    public var runDirectory: String
    /// Whether the kernel is asked (tests say no: this machine's kernel is not theirs).
    public var asksKernel: Bool
    public var now: @Sendable () -> Date

    public init(store: GatewayStore?, timedatedBus: BusConnection.Bus?, environment: [String: String] = ProcessInfo.processInfo.environment,
                runDirectory: String = "/run", asksKernel: Bool = true, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.timedatedBus = timedatedBus
        self.environment = environment
        self.runDirectory = runDirectory
        self.asksKernel = asksKernel
        self.now = now
    }

    /// What a command of this process asks before it sets a watch's clock: timedated where BlueZ
    /// is (the system bus, or `TSGATEWAY_DBUS_ADDRESS`: tests, development) unless
    /// `asksTimedated` is false (a simulated watch: the host's system bus is not a test's or a demo's).
    public init(store: GatewayStore?, asksTimedated: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let bus: BusConnection.Bus? = asksTimedated ? (environment["TSGATEWAY_DBUS_ADDRESS"].flatMap { $0.isEmpty ? nil : .address($0) } ?? .system) : nil
        self.init(store: store, timedatedBus: bus, environment: environment)
    }

    public func evidence() async throws -> ClockEvidence {
        let asserted = try Self.assertion(environment)
        // Said by the person running the gateway: nothing else is asked (no kernel, no bus).
        if let asserted { return ClockEvidence(asserted: asserted, kernelSynchronized: nil, timeSync: .none, now: now()) }
        let kernel = asksKernel ? Self.kernelSynchronized() : nil
        var timeSync = TimeSyncState.none
        if let timedatedBus { timeSync = await Self.timedated(on: timedatedBus) ?? .none }
        if case .none = timeSync { timeSync = Self.runtimeFiles(in: runDirectory) }
        let stamp = try? await store?.newestStamp()
        return ClockEvidence(asserted: asserted, kernelSynchronized: kernel, timeSync: timeSync, now: now(), newestStamp: stamp ?? nil)
    }

    /// `TSGATEWAY_CLOCK`: unset or empty says nothing.
    public static func assertion(_ environment: [String: String]) throws -> ClockAssertion? {
        guard let value = environment[environmentKey]?.trimmingCharacters(in: .whitespaces).lowercased(), !value.isEmpty else { return nil }
        guard let assertion = ClockAssertion(rawValue: value) else {
            throw CategorizedFailure(.invalidInput, "\(environmentKey)=\(value) is neither trusted nor untrusted; set one of them, or unset it to let tsgateway decide from the clock's state")
        }
        return assertion
    }

    /// adjtimex(2) with no change: synchronised unless it answers TIME_ERROR or sets STA_UNSYNC;
    /// nil when the call is refused (a systemd unit's `ProtectClock=` blocks it, reads too). Not
    /// called at all under a seccomp filter (`Seccomp: 2` in /proc/self/status): an allow-list
    /// without adjtimex, as the unit's `SystemCallFilter=@system-service`, kills the process for it.
    public static func kernelSynchronized() -> Bool? {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           status.split(separator: "\n").contains(where: { $0.hasPrefix("Seccomp:") && $0.dropFirst(8).trimmingCharacters(in: .whitespaces) != "0" }) {
            return nil
        }
        var status = timex()
        status.modes = 0
        let state = adjtimex(&status)
        guard state >= 0 else { return nil }
        return state != TIME_ERROR && status.status & Int32(STA_UNSYNC) == 0
    }

    /// timedated's view (it reads the kernel itself, so it answers where a unit cannot): nil
    /// when timedated cannot be reached (no system bus, no timedated: containers).
    static func timedated(on bus: BusConnection.Bus) async -> TimeSyncState? {
        guard let connection = try? BusConnection(bus) else { return nil }
        defer { connection.close() }
        guard let properties = try? await connection.getAllProperties(destination: "org.freedesktop.timedate1", path: "/org/freedesktop/timedate1",
                                                                      interface: "org.freedesktop.timedate1", timeout: .seconds(5)) else { return nil }
        return timedatedState(properties)
    }

    /// `NTPSynchronized` true: synchronised; `NTP` true (an NTP unit enabled): waiting; otherwise
    /// none (NTP switched off, or no NTP unit timedated knows of).
    public static func timedatedState(_ properties: DBusProperties) -> TimeSyncState {
        if properties["NTPSynchronized"]?.boolValue == true { return .synchronized(service: "timedated (NTPSynchronized)") }
        if properties["NTP"]?.boolValue == true { return .waiting(service: "the NTP service timedated reports (NTP=yes)") }
        return .none
    }

    /// systemd-timesyncd writes `synchronized` in its runtime directory once it has synchronised
    /// the clock; chronyd and ntpd leave a pid file while they run.
    public static func runtimeFiles(in run: String) -> TimeSyncState {
        let files = FileManager.default
        if files.fileExists(atPath: "\(run)/systemd/timesync/synchronized") { return .synchronized(service: "systemd-timesyncd") }
        if files.fileExists(atPath: "\(run)/systemd/timesync") { return .waiting(service: "systemd-timesyncd") }
        for (file, service) in [("chrony/chronyd.pid", "chronyd"), ("chronyd.pid", "chronyd"), ("ntpd.pid", "ntpd")]
        where files.fileExists(atPath: "\(run)/\(file)") {
            return .waiting(service: service)
        }
        return .none
    }
}

/// Evidence a test gives (and changes while the gateway runs).
public final class FixedClockEvidence: ClockEvidenceSource, @unchecked Sendable {
    private let lock = NSLock()
    private var current: ClockEvidence

    public init(_ evidence: ClockEvidence) { current = evidence }

    public func set(_ change: (inout ClockEvidence) -> Void) { lock.withLock { change(&current) } }

    public func evidence() async throws -> ClockEvidence { lock.withLock { current } }
}
