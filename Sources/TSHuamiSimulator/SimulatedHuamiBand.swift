import Foundation
import TSHuami
import TSModels
import TSProtocol
import TSTransport

/// A deterministic Huami band (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2), in-process: the band side of
/// protocol-spec/huami.md through the `TSHuami` codec, one characteristic at a time. A link (the
/// loopback of an in-process central, or `HuamiSimulatorPeripheral` behind BlueZ) hands it each
/// write with the characteristic written and delivers what it notifies.
///
/// It holds a 16-byte auth key and refuses any other (`10 x3 04`), its clock, battery, ten alarm
/// slots, the heart-rate monitoring settings, a one-off heart-rate measurement on `2A39` `15 02 01`
/// (read on `2A37`), and its `HuamiBandHistory`, served by the activity fetch from the minute asked
/// for with the counters, count and acknowledgement of §7. Faults (`Fault`) make it refuse the
/// key, cut the link mid-transfer, or damage one packet of the next transfer.
///
/// The project's choices where no source settles the band's behaviour: before auth it answers a
/// configuration or fetch request with status `04` (refused); it sends at most
/// `maxMinutesPerFetch` minutes a transfer (the central fetches again from where it ended); after
/// an acknowledgement (`03`) it drops what it sent, so the next fetch starts after it (a band
/// that keeps its data would start where it was asked to; the spec's §12 question 1).
public actor SimulatedHuamiBand: StandardServicesEndpoint {
    /// The characteristics it serves (protocol-spec/huami.md §1).
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
    public private(set) var battery = HuamiBattery(level: 71, state: 0)
    /// Slot 0…9; nil: no alarm.
    public private(set) var alarmSlots: [HuamiAlarm?]
    /// Minutes between all-day heart-rate measurements; 0 = off.
    public private(set) var heartRateInterval: UInt8 = 10
    public private(set) var sleepHeartRate = true
    /// The clock as the central last set it, and when.
    public private(set) var clockSet: (time: HuamiTime, at: Date)?
    /// The first minute the band still holds: the history's start until an acknowledgement drops data.
    public private(set) var firstHeld: Int64
    public private(set) var isAuthenticated = false
    public private(set) var statistics = Statistics()
    private var key: HuamiAuthKey
    private var refusesKey = false
    private var faults: [Fault] = []
    private var challenge: [UInt8]?
    private var challenges: UInt64 = 0
    /// The minutes the last start answer announced: first minute, count.
    private var pending: (first: Int64, minutes: Int, count: Int)?
    /// The end of the last transfer sent whole, until acknowledged.
    private var sentThrough: Int64?
    private var notify: (@Sendable (Characteristic, [UInt8]) async -> Void)?
    private var linkLoss: (@Sendable () async -> Void)?
    private var events: (@Sendable (String) -> Void)?
    private var measurement: Task<Void, Never>?
    /// Subscribers to Heart Rate Measurement through the standard services (`hr watch` on a loopback link).
    private var heartRateStreams: [AsyncStream<[UInt8]>.Continuation] = []
    private let now: @Sendable () -> Date

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

    private func say(_ line: String) { events?(line) }

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
        heartRateStreams.forEach { $0.finish() }
        heartRateStreams = []
    }

    // MARK: The standard services (a loopback link's Device Information, Current Time, Heart Rate Measurement)

    public nonisolated var standardCharacteristics: Set<StandardCharacteristic> {
        Set(StandardCharacteristic.allCases.filter { deviceInformation($0) != nil }).union([.currentTime, .heartRateMeasurement])
    }

    public func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        if characteristic == .currentTime { return clock().currentTimeBytes }
        guard let value = deviceInformation(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        return value
    }

    public func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        guard characteristic == .currentTime else { throw TransportError.characteristicMissing(characteristic) }
        await centralWrote(value, to: .currentTime)
    }

    public func notifications(of characteristic: StandardCharacteristic) async -> AsyncStream<[UInt8]> {
        guard characteristic == .heartRateMeasurement else { return AsyncStream { $0.finish() } }
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        heartRateStreams.append(continuation)
        return stream
    }

    /// When the band was last taken off the charger and last charged, as the battery reading carries them.
    public var lastOff: Int64 { history.end - 2 * 86_400 - 3 * 3600 }
    public var lastCharge: Int64 { history.end - 2 * 86_400 - 5 * 3600 }

    /// The battery reading: `00`, level, state (`HuamiBattery`), then the last time the band was off
    /// at bytes 3…9 and the last charge at 11…17 as year u16, month, day, hour, minute, second —
    /// the offsets miband2 and satcar77/miband4 read (Gadgetbridge reads the last charge from byte
    /// 10; the project's central reads neither, protocol-spec/huami.md §6). A reading of zeros there
    /// is no date, and miband2's `get_battery` fails on it.
    public func batteryBytes() -> [UInt8] {
        var bytes = battery.bytes
        func date(_ seconds: Int64) -> [UInt8] { Array(bandTime(seconds).shortBytes.prefix(7)) }
        bytes.replaceSubrange(3..<10, with: date(lastOff))
        bytes.replaceSubrange(11..<18, with: date(lastCharge))
        return bytes
    }

    /// A read of `characteristic`: the battery and the clock; the rest are not readable.
    public func read(_ characteristic: Characteristic) throws(HuamiError) -> [UInt8] {
        switch characteristic {
        case .battery: return batteryBytes()
        case .currentTime: return clock().currentTimeBytes
        default: throw HuamiError(.unknownOpcode, "the band's \(characteristic.rawValue) characteristic cannot be read")
        }
    }

    /// Device Information as the band serves it.
    public nonisolated func deviceInformation(_ characteristic: StandardCharacteristic) -> [UInt8]? {
        switch characteristic {
        case .modelNumber: Array(configuration.name.utf8)
        case .firmwareRevision, .softwareRevision: Array(configuration.firmware.utf8)
        case .hardwareRevision: Array(configuration.hardware.utf8)
        case .serialNumber: Array(configuration.serial.utf8)
        case .manufacturerName: Array("Huami (simulated)".utf8)
        default: nil
        }
    }

    /// The central wrote `bytes` to `characteristic`.
    public func centralWrote(_ bytes: [UInt8], to characteristic: Characteristic) async {
        statistics.writesReceived += 1
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

    // MARK: Auth (§2)

    private func auth(_ request: HuamiAuthRequest) async {
        switch request {
        case let .sendKey(_, newKey):
            if configuration.acceptsNewKey {
                key = newKey
                refusesKey = false
                await send(.auth, HuamiAuthAnswer.keyStored.bytes())
            } else {
                await send(.auth, HuamiAuthAnswer.refused(opcode: HuamiAuthRequest.sendKeyOpcode, status: HuamiAuthAnswer.wrongKeyStatus).bytes())
            }
        case let .requestRandom(flags):
            let random = nextChallenge()
            challenge = random
            await send(.auth, HuamiAuthAnswer.random(random).bytes(cryptFlags: flags.cryptFlags))
        case let .sendEncrypted(flags, encrypted):
            guard let challenge, !refusesKey, key.accepts(encrypted: encrypted, challenge: challenge) else {
                statistics.authsRefused += 1
                isAuthenticated = false
                say("auth refused: \(challenge == nil ? "no challenge was asked for" : "not the band's key")")
                await send(.auth, HuamiAuthAnswer.refused(opcode: HuamiAuthRequest.sendEncryptedOpcode, status: HuamiAuthAnswer.wrongKeyStatus)
                    .bytes(cryptFlags: flags.cryptFlags))
                return
            }
            self.challenge = nil
            isAuthenticated = true
            statistics.authsAccepted += 1
            say("auth accepted")
            await send(.auth, HuamiAuthAnswer.accepted.bytes(cryptFlags: flags.cryptFlags))
        }
    }

    /// 16 bytes that differ each time and repeat from run to run (SplitMix64 of a counter).
    private func nextChallenge() -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<2 {
            challenges &+= 1
            var z = challenges &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            out += (0..<8).map { UInt8(truncatingIfNeeded: z >> (8 * $0)) }
        }
        return out
    }

    // MARK: Alarms (§4)

    private func configure(_ request: HuamiConfigRequest) async {
        guard isAuthenticated else {
            statistics.requestsBeforeAuth += 1
            await send(.configuration, HuamiConfigAnswer.other(opcode: request.bytes[0], status: HuamiAuthAnswer.wrongKeyStatus, rest: []).bytes)
            return
        }
        switch request {
        case let .setAlarm(alarm):
            statistics.alarmWrites += 1
            alarmSlots[Int(alarm.slot)] = alarm
            say("alarm \(Self.describe(alarm))")
            await send(.configuration, HuamiConfigAnswer.alarmSet(status: 0x01).bytes)
        case let .clearAlarm(slot):
            statistics.alarmWrites += 1
            alarmSlots[Int(slot)] = nil
            say("alarm slot \(slot): cleared")
            await send(.configuration, HuamiConfigAnswer.alarmSet(status: 0x01).bytes)
        case .alarmStatus:
            let held = alarmSlots.compactMap { $0 }.map { HuamiAlarmStatus(slot: $0.slot, isEnabled: $0.isEnabled) }
            await send(.configuration, HuamiConfigAnswer.alarmStatus(held).bytes)
        case .alarmTable:
            for chunk in HuamiAlarmTable.chunks(alarmSlots.compactMap { $0 }) { await send(.configuration, chunk.bytes) }
        }
    }

    // MARK: Heart rate (§5)

    private func heartRateControl(_ command: HuamiHeartRateCommand) {
        apply(command)
        guard case .manualMeasurement(true) = command else { return }
        measurement?.cancel()
        let delay = configuration.measurementDelay
        measurement = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled, let self else { return }
            await self.sendMeasurement()
        }
    }

    private func apply(_ command: HuamiHeartRateCommand) {
        switch command {
        case let .interval(minutes):
            heartRateInterval = minutes
            say("heart rate measured every \(minutes) minutes (0: off)")
        case let .sleepMonitoring(on):
            sleepHeartRate = on
            say("heart rate during sleep \(on ? "on" : "off")")
        case let .manualMeasurement(on): if !on { measurement?.cancel() }
        }
    }

    /// The reading a one-off measurement gives: deterministic, 62…77 bpm.
    public var measuredBPM: UInt8 { UInt8(62 + statistics.heartRateMeasurements % 16) }

    /// Heart Rate Measurement: flags 00 (8-bit value), the value.
    private func sendMeasurement() async {
        let bpm = measuredBPM
        statistics.heartRateMeasurements += 1
        say("heart rate measured: \(bpm) bpm")
        heartRateStreams.forEach { $0.yield([0x00, bpm]) }
        await send(.heartRateMeasurement, [0x00, bpm])
    }

    // MARK: The activity fetch (§7)

    private func fetch(_ request: HuamiFetchRequest) async {
        guard isAuthenticated else {
            statistics.requestsBeforeAuth += 1
            await send(.fetchControl, HuamiFetchAnswer.refused(opcode: request.bytes[0], status: HuamiAuthAnswer.wrongKeyStatus).bytes)
            return
        }
        switch request {
        case let .start(type, since):
            statistics.fetches += 1
            guard type == HuamiFetchRequest.activityType else {
                await send(.fetchControl, HuamiFetchAnswer.refused(opcode: HuamiFetchRequest.startOpcode, status: 0x02).bytes)
                return
            }
            // The minute holding `since`, not before what the band still holds, nor past what it recorded.
            let asked = HuamiBandHistory.minute(containing: since.unixSeconds)
            let first = min(max(asked, firstHeld), history.end)
            let minutes = min(configuration.maxMinutesPerFetch, Int((history.end - first) / 60))
            var count = minutes * configuration.sampleFormat.size
            if let off = takeFault({ if case let .countOff(bytes) = $0 { bytes } else { nil } }) { count = max(0, count + off) }
            pending = (first, minutes, count)
            sentThrough = nil
            await send(.fetchControl, HuamiFetchAnswer.started(count: UInt32(count), start: bandTime(first)).bytes)
        case .fetchData:
            guard let pending, pending.minutes > 0 else {
                await send(.fetchControl, HuamiFetchAnswer.refused(opcode: HuamiFetchRequest.fetchDataOpcode, status: 0x04).bytes)
                return
            }
            self.pending = nil
            await transfer(first: pending.first, minutes: pending.minutes)
        case .acknowledge:
            statistics.acknowledgements += 1
            if let sentThrough, configuration.dropsAcknowledgedData { firstHeld = max(firstHeld, sentThrough) }
            sentThrough = nil
            pending = nil
            await send(.fetchControl, HuamiFetchAnswer.acknowledged.bytes)
        }
    }

    /// A time in the band's zone: the one its clock was set with, else the history's.
    private func bandTime(_ unixSeconds: Int64) -> HuamiTime {
        let zone = clockSet.flatMap { TimeZone(secondsFromGMT: $0.time.zoneQuarterHours * 900) } ?? history.timeZone
        return HuamiTime(unixSeconds: unixSeconds, zone: zone)
    }

    private func transfer(first: Int64, minutes: Int) async {
        statistics.transfers += 1
        let data = HuamiSample.encode(history.samples(from: first, count: minutes), format: configuration.sampleFormat)
        var packets = HuamiDataPacket.packets(data, perPacket: configuration.dataBytesPerPacket)
        if let index = takeFault({ if case let .skipCounter(packet) = $0 { packet } else { nil } }), packets.indices.contains(index) {
            // Counted as if one packet before it had gone out and been lost.
            for later in index..<packets.count { packets[later].counter &+= 1 }
        }
        if let index = takeFault({ if case let .shortPacket(packet) = $0 { packet } else { nil } }), packets.indices.contains(index),
           packets[index].data.count > 1 {
            packets[index].data.removeLast()
        }
        let cutAfter = takeFault { if case let .cutTransfer(count) = $0 { count } else { nil } }
        for (index, packet) in packets.enumerated() {
            if index == cutAfter {
                await loseLink()
                return
            }
            guard notify != nil else { return }
            statistics.dataPacketsSent += 1
            await send(.activityData, packet.bytes)
        }
        if let cutAfter, cutAfter >= packets.count {
            await loseLink()
            return
        }
        sentThrough = first + Int64(minutes) * 60
        await send(.fetchControl, HuamiFetchAnswer.finished(crc32: configuration.sendsCRC ? TSHuami.CRC32.checksum(data) : nil).bytes)
    }

    private func loseLink() async {
        statistics.transfersCut += 1
        notify = nil
        isAuthenticated = false
        await linkLoss?()
    }

    private func send(_ characteristic: Characteristic, _ bytes: [UInt8]) async {
        guard let notify else { return }
        await notify(characteristic, bytes)
    }

    private func takeFault<Value>(_ match: (Fault) -> Value?) -> Value? {
        for (index, fault) in faults.enumerated() {
            if let value = match(fault) {
                faults.remove(at: index)
                return value
            }
        }
        return nil
    }
}

extension HuamiAuthKey {
    /// The simulated band's key unless told otherwise: `00112233445566778899aabbccddeeff`. It is
    /// no secret (documented in docs/testing.md), which is why it may appear in tests and journeys.
    public static let simulatorDefault = try! HuamiAuthKey(bytes: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                                                  0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
}
