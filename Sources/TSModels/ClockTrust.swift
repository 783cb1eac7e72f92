import Foundation

/// What is known of the system clock when the gateway is about to set a watch's clock from it
/// (gathered by TSWatchService's `SystemClockEvidence`; tests make it up).
public struct ClockEvidence: Sendable, Hashable {
    /// Said by the person running the gateway (`TSGATEWAY_CLOCK=trusted|untrusted`); nil: not said.
    public var asserted: ClockAssertion?
    /// The kernel's NTP status (adjtimex): true synchronised, false unsynchronised (`STA_UNSYNC`,
    /// `TIME_ERROR`), nil unreadable (a unit's `ProtectClock=` refuses even the read).
    public var kernelSynchronized: Bool?
    /// What the time-sync service says (timedated, or systemd-timesyncd's, chronyd's, ntpd's files).
    public var timeSync: TimeSyncState
    /// The system clock now.
    public var now: Date
    /// The clock cannot be earlier than this build: `GatewayVersion.sourceDate`.
    public var buildFloor: Date
    /// The latest time this gateway stamped on anything it stored (a record's arrival, a watch
    /// last seen, a heart-rate sample); nil with an empty store.
    public var newestStamp: Date?

    public init(asserted: ClockAssertion? = nil, kernelSynchronized: Bool?, timeSync: TimeSyncState, now: Date,
                buildFloor: Date = GatewayVersion.sourceDate, newestStamp: Date? = nil) {
        self.asserted = asserted
        self.kernelSynchronized = kernelSynchronized
        self.timeSync = timeSync
        self.now = now
        self.buildFloor = buildFloor
        self.newestStamp = newestStamp
    }
}

/// `TSGATEWAY_CLOCK`: the person running the gateway says whether its clock is right.
public enum ClockAssertion: String, Sendable, Hashable, CaseIterable {
    case trusted, untrusted
}

/// What the machine's time-sync service says of the clock.
public enum TimeSyncState: Sendable, Hashable {
    /// A service says the clock is synchronised (`service`: who says it).
    case synchronized(service: String)
    /// A service runs (or NTP is switched on) and has not synchronised the clock yet.
    case waiting(service: String)
    /// No time-sync service runs, or NTP is switched off (`timedatectl set-ntp false`): nothing
    /// will ever synchronise this clock (build machines, containers, a box without network time).
    case none
}

/// Whether the gateway may set a watch's clock from the system clock, decided by `ClockTrust.decide`.
public enum ClockTrust: Sendable, Hashable {
    case trusted(TrustReason)
    case untrusted(ClockDistrust)

    public enum TrustReason: String, Sendable, Hashable {
        /// `TSGATEWAY_CLOCK=trusted`.
        case asserted
        /// The kernel or the time-sync service says the clock is synchronised.
        case synchronized
        /// Nothing will ever synchronise the clock and it is not earlier than the floors: it is
        /// as right as it will get.
        case nothingWillSync
    }

    public var isTrusted: Bool { if case .trusted = self { true } else { false } }

    /// The reason the clock is not trusted; nil when it is.
    public var distrust: ClockDistrust? { if case let .untrusted(reason) = self { reason } else { nil } }

    /// A stamp this much later than the clock is taken for the clock's own small corrections, not
    /// for a clock that went back.
    public static let stampTolerance: TimeInterval = 120

    /// Decides, in this order:
    /// 1. what the person running the gateway said (`TSGATEWAY_CLOCK`);
    /// 2. synchronised: the kernel (adjtimex without `STA_UNSYNC`) or the time-sync service
    ///    (timedated's `NTPSynchronized`, timesyncd's `synchronized` file) says so. A stored stamp
    ///    later than a synchronised clock was made by a wrong clock, not the other way round;
    /// 3. not trusted: the clock is earlier than this build (`GatewayVersion.sourceDate`);
    /// 4. not trusted: the clock is earlier than the newest stamp in the store (by more than
    ///    `stampTolerance`);
    /// 5. not trusted: a time-sync service runs and has not synchronised yet (a Pi at boot, on
    ///    the time fake-hwclock saved): it will, and the watch waits for it;
    /// 6. otherwise trusted: nothing will ever synchronise this clock (no time-sync service, NTP
    ///    switched off; build machines and containers, whose kernels say "unsynchronised" for
    ///    good) and it passed the floors.
    public static func decide(_ evidence: ClockEvidence) -> ClockTrust {
        let now = evidence.now
        switch evidence.asserted {
        case .trusted: return .trusted(.asserted)
        case .untrusted: return .untrusted(ClockDistrust(.asserted, now: now))
        case nil: break
        }
        if evidence.kernelSynchronized == true { return .trusted(.synchronized) }
        if case .synchronized = evidence.timeSync { return .trusted(.synchronized) }
        if now < evidence.buildFloor { return .untrusted(ClockDistrust(.beforeBuild(evidence.buildFloor), now: now)) }
        if let stamp = evidence.newestStamp, now < stamp - stampTolerance {
            return .untrusted(ClockDistrust(.beforeNewestStamp(stamp), now: now))
        }
        if case let .waiting(service) = evidence.timeSync { return .untrusted(ClockDistrust(.waitingForSync(service: service), now: now)) }
        return .trusted(.nothingWillSync)
    }
}

/// Why the system clock is not trusted to set a watch's clock, and what to do about it. Category
/// `timeout` (exit 75, sysexits' EX_TEMPFAIL): it passes once the clock is synchronised.
public struct ClockDistrust: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// `TSGATEWAY_CLOCK=untrusted`.
        case asserted
        /// The clock is earlier than this build's date.
        case beforeBuild(Date)
        /// The clock is earlier than the newest stamp in the store.
        case beforeNewestStamp(Date)
        /// A time-sync service runs and has not synchronised the clock yet.
        case waitingForSync(service: String)
    }

    public var reason: Reason
    /// The system clock when this was decided.
    public var now: Date

    public init(_ reason: Reason, now: Date) {
        self.reason = reason
        self.now = now
    }

    /// Why, in a few words (the event's and the MQTT state's `reason`).
    public var why: String {
        let clock = Self.format(now)
        switch reason {
        case .asserted:
            return "TSGATEWAY_CLOCK=untrusted says the system clock (\(clock)) is not to be trusted"
        case let .beforeBuild(floor):
            return "the system clock (\(clock)) is earlier than this build of tsgateway (\(Self.format(floor)))"
        case let .beforeNewestStamp(stamp):
            return "the system clock (\(clock)) is earlier than the newest data tsgateway stored (\(Self.format(stamp)))"
        case let .waitingForSync(service):
            return "the system clock (\(clock)) is not synchronised yet (\(service) runs and has not synchronised it)"
        }
    }

    public var description: String {
        let remedy = switch reason {
        case .asserted: "unset TSGATEWAY_CLOCK, or set it to trusted"
        case .waitingForSync: "wait for it (`timedatectl` shows \"System clock synchronized: yes\"), or set the clock, or pass --force"
        case .beforeBuild, .beforeNewestStamp: "set the system clock (`sudo timedatectl set-time …`, or switch NTP on: `sudo timedatectl set-ntp true`), or pass --force"
        }
        return "\(why): the watch's clock is not set from it; \(remedy)"
    }

    public var category: ErrorCategory { .timeout }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
