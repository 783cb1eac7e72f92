import Foundation
import TSGATT
import TSHuami
import TSModels
import TSTransport

/// A deterministic Huami band (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2), in-process: the band side of
/// protocol-spec/huami/huami.md through the `TSHuami` codec, one characteristic at a time. A link (the
/// loopback of an in-process central, or `HuamiSimulatorPeripheral` behind BlueZ) hands it each
/// write with the characteristic written and delivers what it notifies.
///
/// It holds a 16-byte auth key and refuses any other (`10 x3 04`), its clock, battery, ten alarm
/// slots, the heart-rate monitoring settings, a one-off heart-rate measurement on `2A39` `15 02 01`
/// (read on `2A37`), and its `HuamiBandHistory`, served by the activity fetch from the minute asked
/// for with the counters, count and acknowledgement of §7. Faults (`Fault`) make it refuse the
/// key, cut the link mid-transfer, or damage one packet of the next transfer; `answerTiming` says
/// whether its answers go out from inside the write handler or late, after it returned.
///
/// The project's choices where no source settles the band's behaviour: before auth it answers a
/// configuration or fetch request with status `04` (refused); it sends at most
/// `maxMinutesPerFetch` minutes a transfer (the central fetches again from where it ended); after
/// an acknowledgement (`03`) it drops what it sent, so the next fetch starts after it (a band
/// that keeps its data would start where it was asked to; the spec's §12 question 1).
public actor SimulatedHuamiBand: StandardServicesEndpoint {
    /// The characteristics it serves (protocol-spec/huami/huami.md §1).
    public enum Characteristic: String, Sendable, Hashable, CaseIterable {
        case auth, configuration, fetchControl, activityData, battery, currentTime, heartRateMeasurement, heartRateControlPoint, alertLevel

        public var uuid: String {
            switch self {
            case .auth: HuamiGATT.auth
            case .configuration: HuamiGATT.configuration
            case .fetchControl: HuamiGATT.fetchControl
            case .activityData: HuamiGATT.activityData
            case .battery: HuamiGATT.battery
            case .currentTime: HuamiGATT.currentTime
            case .heartRateMeasurement: HuamiGATT.heartRateMeasurement
            case .heartRateControlPoint: HuamiGATT.heartRateControlPoint
            case .alertLevel: HuamiGATT.alertLevel
            }
        }

        /// The service that holds it on the simulated band (`HuamiSimulatorPeripheral` serves this layout).
        public var service: String {
            switch self {
            case .auth: HuamiGATT.secondService
            case .configuration, .fetchControl, .activityData, .battery, .currentTime: HuamiGATT.service
            case .heartRateMeasurement, .heartRateControlPoint: SimulatedHuamiBand.heartRateService
            case .alertLevel: SimulatedHuamiBand.immediateAlertService
            }
        }

        public init?(uuid: String) {
            guard let match = Self.allCases.first(where: { $0.uuid == uuid.lowercased() }) else { return nil }
            self = match
        }

        /// Whether the band answers a write to it with a notification (of it or of another characteristic).
        public var answers: Bool { [.auth, .configuration, .fetchControl].contains(self) }
    }

    public static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    public static let immediateAlertService = "00001802-0000-1000-8000-00805f9b34fb"

    public struct Configuration: Sendable {
        public var model: HuamiModel
        /// The advertised name (the model's, as Gadgetbridge's coordinators match it).
        public var name: String
        public var firmware: String
        public var hardware: String
        public var serial = "SIM0000HUAMI"
        /// The key pairing must use.
        public var authKey: HuamiAuthKey = .simulatorDefault
        /// Whether a first-pairing `01` write replaces the key (a band in pairing mode); false:
        /// refused with `10 01 04`, so only the band's own key authenticates.
        public var acceptsNewKey = false
        /// Data bytes a notification of the activity data (a counter byte goes before them).
        public var dataBytesPerPacket = 16
        /// The most minutes one transfer sends.
        public var maxMinutesPerFetch = 1440
        /// Whether the end of a transfer carries the CRC-32 of its data (newer firmware, §7.5).
        public var sendsCRC = true
        /// Whether an acknowledged transfer is dropped from the band (the next fetch starts after it).
        public var dropsAcknowledgedData = true
        /// How long a one-off heart-rate measurement takes before its reading goes out.
        public var measurementDelay: Duration = .milliseconds(300)
        /// When answers to a write go out, relative to the write's acknowledgement.
        public var answerTiming: AnswerTiming = .immediate
        /// Data packets sent back to back before the band pauses; nil: it never pauses. A band
        /// sends a few packets a connection event. The BlueZ peripheral sending its notifications
        /// as fast as D-Bus takes them let EATT's bearers, each with credits of its own, carry a
        /// packet 255 behind its turn, past what the one-byte counter can place (stop 49's CI,
        /// huami eatt: "packet counter 183 came while 184 is missing"); a pause lets them drain.
        public var pacing: Pacing?

        public struct Pacing: Sendable, Hashable {
            public var packets: Int
            public var pause: Duration

            public init(packets: Int, pause: Duration) {
                self.packets = max(1, packets)
                self.pause = pause
            }

            /// What `tsgateway simulate --dialect huami` uses: 32 packets, 10 ms.
            public static let peripheral = Pacing(packets: 32, pause: .milliseconds(10))
        }

        public init(model: HuamiModel = .miBand5, firmware: String? = nil) {
            self.model = model
            name = model.advertisedNames[0]
            self.firmware = firmware ?? Self.defaultFirmware(model)
            hardware = "V0.44.19.2"
        }

        /// A firmware under which the model's sample size is as §10 says for it (the GTS and GTR
        /// send 8-byte samples with newer firmware).
        static func defaultFirmware(_ model: HuamiModel) -> String {
            switch model {
            case .gts: "0.1.1.17"
            case .gtr: "1.3.5.79"
            default: "1.0.2.58"
            }
        }

        public var sampleFormat: HuamiSampleFormat { model.sampleFormat(firmware: firmware) }
    }

    /// A fault the band applies: `wrongKey` from then on, the others to the next transfer only.
    public enum Fault: Sendable, Hashable {
        /// The band no longer holds the key the central has (it was paired with its app again):
        /// every encrypted number is refused with `10 x3 04`.
        case wrongKey
        /// The link is lost after this many data packets of the next transfer.
        case cutTransfer(afterPackets: Int)
        /// From packet N (from 0) of the next transfer on, counters run one ahead: a packet seems lost.
        case skipCounter(packet: Int)
        /// Packet N (from 0) of the next transfer goes out without its last data byte.
        case shortPacket(packet: Int)
        /// The next start answer announces this many data bytes more than it sends (may be negative).
        case countOff(bytes: Int)
    }

    public struct Statistics: Sendable, Hashable {
        public var connections = 0
        public var writesReceived = 0
        /// Writes the band could not read (the codec's error), answered with a refusal or not at all.
        public var writesRefused = 0
        public var authsAccepted = 0
        public var authsRefused = 0
        /// Configuration and fetch requests refused because the central had not authenticated.
        public var requestsBeforeAuth = 0
        public var alarmWrites = 0
        public var fetches = 0
        public var transfers = 0
        public var dataPacketsSent = 0
        public var acknowledgements = 0
        public var transfersCut = 0
        public var heartRateMeasurements = 0
        /// Clock writes whose day of week was not the date's (taken, as the date says; see `setClock`).
        public var clockWritesWithWrongWeekday = 0
        /// Writes to Alert Level (a vibration; miband2's `ring`).
        public var alerts = 0
    }

    public nonisolated let configuration: Configuration
    /// Everything the band recorded: the ground truth a sync must reproduce (`HuamiGroundTruth`).
    public nonisolated let history: HuamiBandHistory
    public internal(set) var battery = HuamiBattery(level: 71, state: 0)
    /// Slot 0…9; nil: no alarm.
    public internal(set) var alarmSlots: [HuamiAlarm?]
    /// Minutes between all-day heart-rate measurements; 0 = off.
    public internal(set) var heartRateInterval: UInt8 = 10
    public internal(set) var sleepHeartRate = true
    /// The clock as the central last set it, and when.
    public internal(set) var clockSet: (time: HuamiTime, at: Date)?
    /// The first minute the band still holds: the history's start until an acknowledgement drops data.
    public internal(set) var firstHeld: Int64
    public internal(set) var isAuthenticated = false
    public internal(set) var statistics = Statistics()
    var key: HuamiAuthKey
    var refusesKey = false
    private var faults: [Fault] = []
    var challenge: [UInt8]?
    var challenges: UInt64 = 0
    /// The minutes the last start answer announced: first minute, count.
    var pending: (first: Int64, minutes: Int, count: Int)?
    /// The end of the last transfer sent whole, until acknowledged.
    var sentThrough: Int64?
    var notify: (@Sendable (Characteristic, [UInt8]) async -> Void)?
    private var linkLoss: (@Sendable () async -> Void)?
    private var events: (@Sendable (String) -> Void)?
    var measurement: Task<Void, Never>?
    /// The answers of the writes being handled, innermost last, while `answerTiming` is `late`.
    var holding: [[HeldAnswer]] = []
    /// The delivery of the last write's late answers (the next write's wait for it).
    var lateAnswers: Task<Void, Never>?
    /// Subscribers to Heart Rate Measurement through the standard services (`hr watch` on a loopback link).
    var heartRateStreams: [AsyncStream<[UInt8]>.Continuation] = []
    private let now: @Sendable () -> Date
    /// How the band waits out a pause of its pacing (tests count the pauses instead).
    var pause: @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }

    /// Replaces how the band waits out its pacing's pauses.
    public func pausing(with pause: @escaping @Sendable (Duration) async -> Void) { self.pause = pause }

    /// `alarms` and `monitors`: what the band holds to start with (a simulated watch's memory
    /// between runs); labels are not kept, as a band has none.
    public init(configuration: Configuration = Configuration(), history: HuamiBandHistory, alarms: [Alarm] = [], monitors: [MonitorConfig] = [],
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.history = history
        self.now = now
        key = configuration.authKey
        firstHeld = history.start
        var slots = [HuamiAlarm?](repeating: nil, count: HuamiAlarm.slots)
        for alarm in alarms { if let held = try? HuamiAlarm(alarm) { slots[Int(held.slot)] = held } }
        alarmSlots = slots
        for config in monitors {
            switch try? HuamiHeartRateCommand(config) {
            case let .interval(minutes): heartRateInterval = minutes
            case let .sleepMonitoring(on): sleepHeartRate = on
            default: break
            }
        }
    }

    // MARK: What the wearer and the test do

    public func inject(_ fault: Fault) {
        if fault == .wrongKey { refusesKey = true } else { faults.append(fault) }
    }

    public func setBattery(_ battery: HuamiBattery) { self.battery = battery }

    /// Cuts the link when a `cutTransfer` fault fires (over BlueZ: a disconnect); without it the
    /// band only stops sending.
    public func onLinkLoss(_ handler: @escaping @Sendable () async -> Void) { linkLoss = handler }

    /// Hears a line for the operator whenever the central changes or reads something on the band
    /// (`tsgateway simulate` prints them; the e2e journeys compare a client's view with them).
    public func onEvent(_ handler: @escaping @Sendable (String) -> Void) { events = handler }

    func say(_ line: String) { events?(line) }

    /// `slot 2: 07:30 once, on, no snooze`.
    public static func describe(_ alarm: HuamiAlarm) -> String {
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        let days = alarm.repeatDays == .once ? "once" : (0..<7).filter { alarm.repeatDays.rawValue & (1 << $0) != 0 }.map { names[$0] }.joined(separator: ",")
        return "slot \(alarm.slot): \(two(alarm.hour)):\(two(alarm.minute)) \(days), \(alarm.isEnabled ? "on" : "off")\(alarm.isEnabled && !alarm.snoozeAllowed ? ", no snooze" : "")"
    }

    /// The alarms as the project knows them: what the CLI's simulated watch remembers between runs.
    public var alarms: [Alarm] { alarmSlots.compactMap { $0?.alarm } }

    /// The heart-rate settings as monitor configs (all day, no alert): what a simulated watch remembers.
    public var monitorTable: [MonitorConfig] {
        [MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: heartRateInterval > 0, intervalMinutes: UInt16(max(1, heartRateInterval)))),
         MonitorConfig(type: .sleep, schedule: MonitorSchedule(enabled: sleepHeartRate, startMinute: 0, endMinute: 1440, intervalMinutes: 5))]
    }

    /// The band's clock now: the time last set plus what passed since, in the zone it was set
    /// with; before any set, the simulator's clock in the band's zone.
    public func clock() -> HuamiTime {
        guard let clockSet else { return HuamiTime(unixSeconds: Int64(now().timeIntervalSince1970), zone: history.timeZone) }
        let elapsed = Int64(now().timeIntervalSince(clockSet.at).rounded(.down))
        let zone = TimeZone(secondsFromGMT: clockSet.time.zoneQuarterHours * 900) ?? history.timeZone
        var time = HuamiTime(unixSeconds: clockSet.time.unixSeconds + elapsed, zone: zone)
        time.fraction = 0
        return time
    }

    // MARK: The link

    public func centralConnected(notify: @escaping @Sendable (Characteristic, [UInt8]) async -> Void) {
        statistics.connections += 1
        self.notify = notify
        isAuthenticated = false
        challenge = nil
        pending = nil
    }

    public func centralDisconnected() {
        notify = nil
        isAuthenticated = false
        challenge = nil
        pending = nil
        measurement?.cancel()
        measurement = nil
        lateAnswers?.cancel()
        lateAnswers = nil
        heartRateStreams.forEach { $0.finish() }
        heartRateStreams = []
    }

    /// The central wrote `bytes` to `characteristic`.
    public func centralWrote(_ bytes: [UInt8], to characteristic: Characteristic) async {
        statistics.writesReceived += 1
        await answering { await handleWrite(bytes, to: characteristic) }
    }

    private func handleWrite(_ bytes: [UInt8], to characteristic: Characteristic) async {
        do {
            switch characteristic {
            case .auth: try await auth(HuamiAuthRequest(bytes: bytes))
            case .configuration: try await configure(HuamiConfigRequest(bytes: bytes))
            case .fetchControl: try await fetch(HuamiFetchRequest(bytes: bytes))
            case .currentTime:
                let time = try setClock(bytes)
                clockSet = (time, now())
                say("clock set to \(time)")
            case .alertLevel:
                statistics.alerts += 1
                say("alert level \(bytes.first.map(String.init) ?? "none") (a vibration)")
            case .heartRateControlPoint: try heartRateControl(HuamiHeartRateCommand(bytes: bytes))
            case .activityData, .battery, .heartRateMeasurement: statistics.writesRefused += 1
            }
        } catch {
            statistics.writesRefused += 1
        }
    }

    /// The clock a Current Time write sets (§3). A day of week that is not the date's is taken
    /// as the date's: miband2 writes Python's 0-based weekday (Monday = 0) and its README shows a
    /// Mi Band 2 taking the time, so a band does not refuse it; every other field is checked.
    private func setClock(_ bytes: [UInt8]) throws(HuamiError) -> HuamiTime {
        guard bytes.count == HuamiTime.currentTimeSize else { return try HuamiTime(currentTimeBytes: bytes) }
        let fields = HuamiTime(year: Int(bytes[0]) | Int(bytes[1]) << 8, month: Int(bytes[2]), day: Int(bytes[3]), hour: Int(bytes[4]),
                               minute: Int(bytes[5]), second: Int(bytes[6]), zoneQuarterHours: Int(Int8(bitPattern: bytes[10])))
        var fixed = bytes
        if Int(bytes[7]) != fields.weekday {
            fixed[7] = UInt8(truncatingIfNeeded: fields.weekday)
            statistics.clockWritesWithWrongWeekday += 1
        }
        return try HuamiTime(currentTimeBytes: fixed)
    }

    func loseLink() async {
        statistics.transfersCut += 1
        isAuthenticated = false
        if !holding.isEmpty {
            holding[holding.count - 1].append(.linkLoss)
            return
        }
        await deliverLinkLoss()
    }

    func deliverLinkLoss() async {
        notify = nil
        isAuthenticated = false
        await linkLoss?()
    }

    /// Notifies `bytes` on `characteristic` now, or, while a write is handled with `late` timing, once it has returned.
    func send(_ characteristic: Characteristic, _ bytes: [UInt8]) async {
        if !holding.isEmpty {
            holding[holding.count - 1].append(.notification(characteristic, bytes))
            return
        }
        await deliver(characteristic, bytes)
    }

    func deliver(_ characteristic: Characteristic, _ bytes: [UInt8]) async {
        guard let notify else { return }
        await notify(characteristic, bytes)
    }

    func takeFault<Value>(_ match: (Fault) -> Value?) -> Value? {
        for (index, fault) in faults.enumerated() {
            if let value = match(fault) {
                faults.remove(at: index)
                return value
            }
        }
        return nil
    }
}
