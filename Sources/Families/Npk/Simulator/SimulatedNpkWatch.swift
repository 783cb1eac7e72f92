import Foundation
import SwiftProtobuf
import TSGATT
import TSModels
import TSNpk
import TSSimulatedHistory
import TSTransport

/// A deterministic TopStep watch speaking NPK, in-process: the watch side of a `LoopbackTransport`.
/// It answers bind and login, device information, the clock, battery, alarms, the four monitor
/// settings and sleep sync by range (one list frame per day); the test or the CLI edits its alarms
/// "on the wrist" and sets its battery, and it can damage or lose one sleep day of the next sync.
public actor SimulatedNpkWatch: PeripheralEndpoint {
    public struct Configuration: Sendable {
        public var model = "NPK Simulator"
        public var firmware = "1.0.0-sim"
        public var maxAlarms = 8
        public var abilities: [NpkAbility] = [.heartRate, .bloodPressure, .spo2, .stress]
        /// Who the watch is bound to; nil: nobody (a login answers 1, user id mismatch).
        public var boundUserId: String?
        /// What the wearer does when asked to confirm a bind.
        public var bindAnswer: NpkBindResult = .ok
        /// Local midnight of this zone starts a sleep day.
        public var timeZone: TimeZone = .current
        /// Bytes per notification; nil: the link's MTU − 3.
        public var chunkSize: Int?
        /// Every answer to a request goes out twice, the second after the first: a watch that
        /// answers a request and its resend both, so a copy may meet the central's next request of
        /// the same command (issue 47: answers that come twice or for an earlier request).
        public var answersTwice = false

        public init() {}
    }

    /// A fault the watch applies once, to the next sleep sync.
    public enum SleepFault: Sendable, Hashable {
        /// The list frame of this day (index from 0) goes out with one payload byte flipped.
        case corruptDay(Int)
        /// The list frame of this day never goes out.
        case dropDay(Int)
        /// The day with this index goes out after the next one, as bluetoothd's EATT bearers
        /// can deliver them.
        case swapDays(Int)
        /// The end of the sync (05/22) goes out before the last day.
        case endBeforeLastDay
        /// After this many days the watch loses the link (its owner's `onLinkLoss` cuts it) and
        /// sends nothing more of the sync.
        case loseLinkAfterDays(Int)
    }

    public struct Statistics: Sendable, Hashable {
        public var connections = 0
        public var framesReceived = 0
        /// Frames from the central the watch could not read (damaged, unknown).
        public var framesRefused = 0
        public var retransmissionsReceived = 0
        public var sleepSyncs = 0
        public var heartRateSyncs = 0
        /// List frames of sleep days sent (a dropped one is not sent).
        public var sleepDaysSent = 0
        /// Links lost by a `loseLinkAfterDays` fault.
        public var linksLost = 0
        public var binds = 0
        public var logins = 0
    }

    public let configuration: Configuration
    /// Every record the watch holds: the ground truth a sync must reproduce.
    public let records: [SleepItem]
    /// The heart rate the watch measured on its own: the ground truth of a heart-rate sync
    /// (`SimulatedNpkWatch+HeartRate.swift`).
    public let heartRate: [HeartRateSample]
    public private(set) var alarms: [Alarm]
    public private(set) var boundUserId: String?
    public private(set) var battery = BatteryStatus(level: 76, state: .discharging)
    /// What the central sent with its last bind or login.
    public private(set) var lastAuthParam: TSMetaAuthParam?
    /// The clock the central last set.
    public private(set) var clock: TSMetaTimeModel?
    public private(set) var statistics = Statistics()
    private var monitors: [MonitorType: NpkMonitorSettings]
    /// The faults of the next sleep syncs, one per sync, first first.
    private var sleepFaults: [SleepFault] = []
    private var answerCorruption = false
    var heartRateFault: HeartRateFault?
    private var link: Link?
    /// Counts sync starts: a sync still streaming stops when a newer one begins.
    private var syncGeneration = 0
    /// One frame's chunks go out together: a frame never interleaves with another.
    private var sending = false
    private var sendQueue: [CheckedContinuation<Void, Never>] = []
    private var linkLoss: (@Sendable () async -> Void)?

    private struct Link {
        var mtu: ATTMTU
        var send: @Sendable ([UInt8]) async -> Void
        var reassembler = NpkReassembler()
    }

    public init(configuration: Configuration = Configuration(), records: [SleepItem], alarms: [Alarm] = [.npkSimulatorDefault],
                monitors: [MonitorConfig] = [], heartRate: [HeartRateSample] = []) {
        self.configuration = configuration
        self.records = records.sorted { $0.start < $1.start }
        self.heartRate = heartRate.sorted { $0.time < $1.time }
        self.alarms = alarms
        boundUserId = configuration.boundUserId
        var settings: [MonitorType: NpkMonitorSettings] = [
            .heartRate: .heartRate(TSMetaHeartRateConfig()), .spo2: .spo2(TSMetaBloodOxygenConfig()),
            .stress: .stress(TSMetaStressConfig()), .bloodPressure: .bloodPressure(TSMetaBloodPressureConfig()),
        ]
        for (type, empty) in settings {
            let config = monitors.first { $0.type == type } ?? .factoryDefault(type)
            settings[type] = (try? empty.applying(config)) ?? empty
        }
        self.monitors = settings
    }

    // MARK: What the wearer and the test do

    /// The wearer changes the alarms on the watch: it says so with data-changed {alarms}.
    public func editOnWrist(_ alarms: [Alarm]) async {
        self.alarms = alarms
        var changed = TSMetaDataChanged()
        changed.type = 1
        await notify(.dataChanged, changed)
    }

    /// The battery level changes: the watch notifies it (03/0A).
    public func setBattery(_ status: BatteryStatus) async {
        battery = status
        await notify(.batteryChanged, Self.batteryModel(status))
    }

    /// What the watch moves when the wearer "edits on the wrist" in demos and tests: sets a
    /// 07:00 alarm when there is none, otherwise the first alarm 5 minutes later (within its hour).
    public func nudgeFirstAlarmOnWrist() async {
        var edited = alarms
        if edited.isEmpty {
            edited = [Alarm(slot: 0, label: "Set on the watch", hour: 7, minute: 0)]
        } else {
            edited[0].setTime(hour: Int(edited[0].hour), minute: (Int(edited[0].minute) + 5) % 60)
        }
        await editOnWrist(edited)
    }

    /// The fault of the next sleep sync (nil: none), replacing any queued.
    public func injectSleepFault(_ fault: SleepFault?) { sleepFaults = fault.map { [$0] } ?? [] }

    /// Faults for the next sleep syncs, one each, in this order.
    public func queueSleepFaults(_ faults: [SleepFault]) { sleepFaults += faults }

    /// Cuts the link when a `loseLinkAfterDays` fault fires (over BlueZ: a disconnect); without
    /// it the watch only stops streaming.
    public func onLinkLoss(_ handler: @escaping @Sendable () async -> Void) { linkLoss = handler }

    /// The link's ATT MTU as the watch learned it (BlueZ reports it with each write): chunks
    /// of the watch's next frames follow it.
    public func linkMTUChanged(_ mtu: ATTMTU) { link?.mtu = mtu }

    /// The next answer goes out with its last byte flipped (its CRC then fails at the central).
    public func corruptNextAnswer() { answerCorruption = true }

    /// The records of `range` the way the watch hands them over: by day.
    public func sleepDays(in range: Range<Int64>) -> [(day: Int64, items: [SleepItem])] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = configuration.timeZone
        let wanted = records.filter { range.contains($0.start) }
        let grouped = Dictionary(grouping: wanted) {
            Int64(calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval($0.start))).timeIntervalSince1970)
        }
        return grouped.keys.sorted().map { ($0, grouped[$0]!) }
    }

    // MARK: PeripheralEndpoint

    public func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {
        statistics.connections += 1
        link = Link(mtu: mtu, send: send)
    }

    public func centralDisconnected() async { link = nil }

    public func centralWrote(_ chunk: [UInt8]) async {
        guard link != nil else { return }
        let outputs = link!.reassembler.feed(chunk)
        for output in outputs {
            switch output {
            case let .frame(frame): await handle(frame)
            case .dropped: statistics.framesRefused += 1
            }
        }
    }

    // MARK: Answering

    private func handle(_ frame: NpkFrame) async {
        statistics.framesReceived += 1
        if frame.flags.contains(.retransmission) { statistics.retransmissionsReceived += 1 }
        let message: NpkMessage
        do {
            message = try NpkMessage(frame, from: .toWatch)
        } catch {
            statistics.framesRefused += 1
            return
        }
        do {
            try await answer(message, frame: frame)
        } catch {
            statistics.framesRefused += 1
        }
    }

    private func answer(_ message: NpkMessage, frame: NpkFrame) async throws {
        let reply: (any SwiftProtobuf.Message)?
        switch frame.command {
        case .login:
            statistics.logins += 1
            let param = try message.payload(as: TSMetaAuthParam.self)
            lastAuthParam = param
            reply = Self.authRespond(boundUserId == param.userID ? .ok : .userIdMismatch)
        case .bind:
            statistics.binds += 1
            let param = try message.payload(as: TSMetaAuthParam.self)
            lastAuthParam = param
            if configuration.bindAnswer.isSuccess { boundUserId = param.userID }
            reply = Self.authRespond(configuration.bindAnswer)
        case .deviceInfo:
            var info = TSMetaPeripheralInfo()
            info.model = configuration.model
            info.version = configuration.firmware
            info.limits.alarm = Int32(configuration.maxAlarms)
            var bits = [UInt8](repeating: 0, count: 3)
            for ability in configuration.abilities { bits[ability.rawValue / 8] |= 1 << UInt8(ability.rawValue % 8) }
            info.ability = Data(bits)
            reply = info
        case .timeSet:
            clock = try message.payload(as: TSMetaTimeModel.self)
            reply = TSCommonResponse()
        case .battery:
            reply = Self.batteryModel(battery)
        case .alarmsGet:
            var list = TSMetaAlarmList()
            list.items = try alarms.map(NpkAlarms.item(from:))
            reply = list
        case .alarmsSet:
            let list = try message.payload(as: TSMetaAlarmList.self)
            var response = TSCommonResponse()
            if list.items.count > configuration.maxAlarms {
                response.result = 1
            } else {
                alarms = try NpkAlarms.alarms(from: list)
            }
            reply = response
        case .heartRateConfigGet, .stressConfigGet, .spo2ConfigGet, .bloodPressureConfigGet:
            reply = try monitorMessage(for: frame.command)
        case .heartRateConfigSet, .stressConfigSet, .spo2ConfigSet, .bloodPressureConfigSet:
            try setMonitor(message)
            reply = TSCommonResponse()
        case .syncStart:
            let request = try message.payload(as: TSMetaSyncStartRequest.self)
            if request.type == NpkSyncType.heartRate.rawValue {
                statistics.heartRateSyncs += 1
                try await syncHeartRate(request, sequence: frame.sequence)
            } else {
                try await sync(request, sequence: frame.sequence)
            }
            return
        default:
            statistics.framesRefused += 1
            return
        }
        var bytes = try NpkFrame(command: frame.command, flags: .response, sequence: frame.sequence, message: reply).encoded()
        if answerCorruption, bytes.count > NpkFrame.headerSize {
            answerCorruption = false
            bytes[bytes.count - 1] ^= 0x5A
        }
        await sendBytes(bytes)
        if configuration.answersTwice { await sendBytes(bytes) }
    }

    private func monitorMessage(for command: NpkCommand) throws -> any SwiftProtobuf.Message {
        let type: MonitorType = switch command {
        case .heartRateConfigGet: .heartRate
        case .stressConfigGet: .stress
        case .spo2ConfigGet: .spo2
        default: .bloodPressure
        }
        return switch monitors[type]! {
        case let .heartRate(settings): settings
        case let .stress(settings): settings
        case let .spo2(settings): settings
        case let .bloodPressure(settings): settings
        }
    }

    private func setMonitor(_ message: NpkMessage) throws {
        switch message.command {
        case .heartRateConfigSet: monitors[.heartRate] = .heartRate(try message.payload(as: TSMetaHeartRateConfig.self))
        case .stressConfigSet: monitors[.stress] = .stress(try message.payload(as: TSMetaStressConfig.self))
        case .spo2ConfigSet: monitors[.spo2] = .spo2(try message.payload(as: TSMetaBloodOxygenConfig.self))
        default: monitors[.bloodPressure] = .bloodPressure(try message.payload(as: TSMetaBloodPressureConfig.self))
        }
    }

    /// Answers the start, then one list frame per day with the start's sequence, then 05/22.
    private func sync(_ request: TSMetaSyncStartRequest, sequence: UInt16) async throws {
        statistics.sleepSyncs += 1
        var response = TSMetaSyncStartResponse()
        response.type = request.type
        guard request.type == NpkSyncType.sleep.rawValue else {
            response.result = 127
            await send(try NpkFrame(command: .syncStart, flags: .response, sequence: sequence, message: response))
            return
        }
        let days = sleepDays(in: NpkTime.unix(fromT2000: request.start)..<NpkTime.unix(fromT2000: request.end))
        response.result = days.isEmpty ? 1 : 0
        await send(try NpkFrame(command: .syncStart, flags: .response, sequence: sequence, message: response))
        guard !days.isEmpty else { return }
        let fault = sleepFaults.isEmpty ? nil : sleepFaults.removeFirst()
        let connection = statistics.connections
        syncGeneration += 1
        let generation = syncGeneration
        var overtaken: [UInt8]?
        for (index, day) in days.enumerated() {
            // The link this sync answers is gone (lost mid-stream), or the central asked again: stop, as a watch would.
            guard link != nil, statistics.connections == connection, syncGeneration == generation else { return }
            if case let .loseLinkAfterDays(count) = fault, index == count {
                statistics.linksLost += 1
                if let linkLoss {
                    link = nil
                    await linkLoss()
                }
                return
            }
            var element = TSMetaSleepDay()
            element.timestamp = try NpkTime.t2000(fromUnix: day.day)
            element.items = try day.items.map { item in
                var sleep = TSMetaSleepItem()
                sleep.timestamp = try NpkTime.t2000(fromUnix: item.start)
                sleep.duration = Int32(clamping: item.duration)
                sleep.type = Int32(item.stage.rawValue)
                return sleep
            }
            let payload = NpkListPosition.payload(total: UInt32(days.count), index: UInt32(index), element: try element.serializedBytes())
            var bytes = try NpkFrame(command: .sleepData, flags: .list, sequence: sequence, payload: payload).encoded()
            switch fault {
            case .dropDay(index): continue
            case .corruptDay(index): bytes[bytes.count - 1] ^= 0x5A
            case .swapDays(index) where index + 1 < days.count:
                overtaken = bytes
                continue
            case .endBeforeLastDay where index == days.count - 1:
                await send(try Self.syncEnd(type: request.type, sequence: sequence))
            default: break
            }
            await sendBytes(bytes)
            statistics.sleepDaysSent += 1
            if let held = overtaken {
                overtaken = nil
                await sendBytes(held)
                statistics.sleepDaysSent += 1
            }
        }
        guard link != nil, statistics.connections == connection, syncGeneration == generation, fault != .endBeforeLastDay else { return }
        await send(try Self.syncEnd(type: request.type, sequence: sequence))
    }

    private static func syncEnd(type: Int32, sequence: UInt16) throws -> NpkFrame {
        var end = TSMetaSyncStopRequest()
        end.type = type
        return try NpkFrame(command: .syncEnd, sequence: sequence, message: end)
    }

    private func notify(_ command: NpkCommand, _ message: any SwiftProtobuf.Message) async {
        guard let frame = try? NpkFrame(command: command, sequence: 0, message: message) else { return }
        await send(frame)
    }

    var isLinked: Bool { link != nil }

    func send(_ frame: NpkFrame) async {
        guard let bytes = try? frame.encoded() else { return }
        await sendBytes(bytes)
    }

    func sendBytes(_ bytes: [UInt8]) async {
        guard link != nil else { return }
        await acquireSendSlot()
        defer { releaseSendSlot() }
        // The link may have gone, or its MTU changed, while this frame waited for its turn.
        guard let link else { return }
        let size = configuration.chunkSize ?? NpkChunking.chunkSize(mtu: link.mtu.value)
        for chunk in NpkChunking.chunks(bytes, size: size) { await link.send(chunk) }
    }

    private func acquireSendSlot() async {
        guard sending else {
            sending = true
            return
        }
        await withCheckedContinuation { sendQueue.append($0) }
    }

    private func releaseSendSlot() {
        if sendQueue.isEmpty {
            sending = false
        } else {
            sendQueue.removeFirst().resume()
        }
    }

    private static func authRespond(_ result: NpkBindResult) -> TSMetaAuthRespond {
        var respond = TSMetaAuthRespond()
        respond.result = result.rawValue
        return respond
    }

    private static func batteryModel(_ status: BatteryStatus) -> TSMetaBatteryModel {
        var model = TSMetaBatteryModel()
        model.level = UInt32(status.level)
        model.charging = status.state == .charging
        return model
    }
}

extension Alarm {
    /// The alarm a new simulated NPK watch starts with: Work, 06:45 on workdays (NPK has no snooze).
    public static let npkSimulatorDefault = Alarm(slot: 0, label: "Work", hour: 6, minute: 45, repeatDays: .workdays)
}
