import Foundation
import TSDevice
import TSModels
import TSSimulatedHistory
import TSSimulator
import TSTransport

/// One watch family as the whole product knows it, as Gadgetbridge has a coordinator per device
/// family: its dialect (names, how it is recognised, GATT profile, pairing secret, central:
/// `WatchDialect`) and its simulated device. `WatchFamilies.builtIn` holds one line per family;
/// `simulate`, `pair`, the CLI's `--simulate`, serve's configuration and `info` read it and
/// branch on no dialect's name.
public struct WatchFamily: Sendable {
    public var dialect: WatchDialect
    /// Its simulated device, in-process over the loopback transport; nil: it has none.
    public var simulated: SimulatedFamily?
    /// Its simulated device as a BlueZ peripheral (`tsgateway simulate`); nil: it has none.
    public var peripheral: SimulatedPeripheralFamily?

    public init(dialect: WatchDialect, simulated: SimulatedFamily? = nil, peripheral: SimulatedPeripheralFamily? = nil) {
        self.dialect = dialect
        self.simulated = simulated
        self.peripheral = peripheral
    }

    public var name: Dialect { dialect.name }
}

/// How a family's simulated device is made from the options every simulated watch shares.
public struct SimulatedFamily: Sendable {
    public var open: @Sendable (SimulatedWatchOptions) throws -> SimulatedLink

    public init(open: @escaping @Sendable (SimulatedWatchOptions) throws -> SimulatedLink) { self.open = open }
}

/// A simulated device and the link to it.
public struct SimulatedLink: Sendable {
    public var transport: any WatchTransport
    public var device: any SimulatedDevice
    /// The secret the simulated device takes (a band's auth key), given to its central when the
    /// caller gave none; nil: it takes none.
    public var pairingSecret: PairingSecret?

    public init(transport: any WatchTransport, device: any SimulatedDevice, pairingSecret: PairingSecret? = nil) {
        self.transport = transport
        self.device = device
        self.pairingSecret = pairingSecret
    }
}

/// What the front doors ask of any simulated device, whatever its dialect.
public protocol SimulatedDevice: Sendable {
    /// The sleep records it holds, as a sync of all of them must store them (the ground truth
    /// the conformance suite and `simulate --ground-truth` compare against); empty: it keeps none.
    var sleepRecords: [SleepItem] { get }
    /// Its alarm table now: what the CLI's simulated watch remembers between runs; nil: it has none (a ring).
    func alarmTable() async -> [Alarm]?
    /// Its monitor settings now, when it keeps them in TSModels' terms; nil: not kept between runs.
    func monitorTable() async -> [MonitorConfig]?
    /// The wearer edits the first alarm on the wrist (SIGUSR1, `alarms watch` demos).
    func editFirstAlarmOnWrist() async
    /// Its standard services (Device Information, Battery, Heart Rate), when simulated beside its dialect.
    var standardServices: SimulatedStandardServices? { get }
    /// The live night `tsgateway serve` plays on it (protocol v1's live stages and heart rate).
    var night: SimulatedNight? { get }
    /// Keeps its wrist edits in `journal` instead of memory (serve's ground truth).
    func keepWatchSideEdits(in journal: WatchSideEditJournal) async
    /// Calls `observer` with every sleep commit the watch accepts; false when this watch takes none.
    func onSleepCommit(_ observer: @escaping @Sendable (AcceptedSleepCommit) -> Void) async -> Bool
}

extension SimulatedDevice {
    /// How many sleep records it holds.
    public var recordCount: Int { sleepRecords.count }
    public func monitorTable() async -> [MonitorConfig]? { nil }
    public var standardServices: SimulatedStandardServices? { nil }
    public var night: SimulatedNight? { nil }
    public func keepWatchSideEdits(in journal: WatchSideEditJournal) async {}
    public func onSleepCommit(_ observer: @escaping @Sendable (AcceptedSleepCommit) -> Void) async -> Bool { false }
}

/// A simulated watch opened in its dialect.
public struct OpenedSimulatedWatch: Sendable {
    public var central: any WatchCentral
    public var device: any SimulatedDevice

    public init(central: any WatchCentral, device: any SimulatedDevice) {
        self.central = central
        self.device = device
    }
}

/// The simulated watch: its history, its memory and the link's faults. The CLI's `--simulate`
/// and a `simulated: true` watch of `tsgateway serve` are this one watch with their options,
/// whatever dialect it speaks; each family takes what applies to it.
public struct SimulatedWatchOptions: Sendable {
    public var seed: UInt64 = 20_251_119
    public var timeZone: TimeZone = .current
    /// Days of sleep history up to `now`.
    public var historyDays = 30
    public var now: Date = SimulatorClock.now()
    public var alarms: [Alarm] = [.simulatorDefault]
    public var monitors: [MonitorConfig] = []
    public var protocolVersion: SimulatedProtocol = .version1_1
    /// Protocol v1's service; false: a band with the standard services only.
    public var servesProtocolV1 = true
    /// Device Information, Battery, Current Time and Heart Rate beside protocol v1.
    public var standardServices = true
    public var packetDelay: Duration = .zero
    /// A test's hold on the link: after this many notifications, the next wait until `resumeFile` exists.
    public var pauseAfterNotifications: Int?
    public var resumeFile: String?
    public var disconnectEvery: Int?
    /// Each answer reaches the central this long after the watch sent it, after its write returned
    /// (`FaultInjection.answerLateness`); zero: at once.
    public var answerLateness: Duration = .zero
    /// The live night the daemon plays: stage events this far apart, heart rate this often.
    public var liveStageInterval: Duration?
    public var heartRateInterval: Duration = .seconds(1)
    /// What the wearer of a simulated watch does when it asks to confirm a pairing (a bind).
    public var wearer: SimulatedWearer = .confirm

    public init() {}

    /// The link's faults.
    public var faults: FaultInjection {
        FaultInjection(delay: packetDelay, disconnectEvery: disconnectEvery, answerLateness: answerLateness,
                       pauseAfterNotifications: pauseAfterNotifications, resumeFile: resumeFile)
    }

    /// The sleep history every family's simulated device starts from (a ring stages its own).
    public var sleepRecords: [SleepItem] {
        SleepDataGenerator(seed: seed, timeZone: timeZone).records(days: historyDays, lastMorning: now, notAfter: now)
    }
}
