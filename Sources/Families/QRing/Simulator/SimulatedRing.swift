import Foundation
import TSGATT
import TSModels
import TSQRing
import TSTransport

/// A deterministic QRing ring, in-process: the ring side of a `LoopbackTransport` with the
/// command pair, the big-data pair and Device Information. It answers set time, battery, the
/// heart-rate log and its settings, the SpO2/stress/HRV switches, steps, real-time heart rate and
/// the big-data sleep request from its `RingHistory`; a test damages or loses one answer with a
/// `Fault`. It has no alarms, as a ring has none.
public actor SimulatedRing: PeripheralEndpoint, SecondChannelEndpoint, StandardServicesEndpoint {
    public struct Configuration: Sendable {
        public var name = "R02_5A1C"
        public var hardware = "R02_V3.0"
        public var firmware = "R02_3.00.06_240523"
        /// Bytes per big-data notification; nil: the link's MTU − 3.
        public var bigDataChunkSize: Int?
        /// How often a real-time measurement sends a reading.
        public var realTimeInterval: Duration = .milliseconds(200)
        /// Every answer on the command pair goes out twice, the second after the first: a ring that
        /// answers a request and its resend both, so a copy may meet the central's next request of
        /// the same command (issue 47: answers that come twice or for an earlier request).
        public var answersTwice = false

        public init() {}
    }

    /// A fault the ring applies once, to the next answer it concerns.
    public enum Fault: Sendable, Hashable {
        /// The next answer to this command goes out with a checksum that does not add up.
        case wrongChecksum(command: UInt8)
        /// Packet `index` of the next heart-rate log answer never goes out.
        case dropLogPacket(index: Int)
        /// The next sleep reply has a payload byte flipped, so its CRC does not match.
        case wrongCRC
        /// The next sleep reply stops before the length its header announced.
        case truncatedBigData
        /// The next sleep reply is sent whole, with a day whose pairs run past its length.
        case sleepDayOverrun
    }

    public struct Statistics: Sendable, Hashable {
        public var connections = 0
        public var packetsReceived = 0
        /// Packets from the central with a wrong length or checksum.
        public var packetsRefused = 0
        public var sleepRequests = 0
        public var heartRateLogRequests = 0
        public var stepsRequests = 0
        public var notificationsSent = 0
    }

    public nonisolated let configuration: Configuration
    /// Everything the ring holds: the ground truth a sync must reproduce.
    public nonisolated let history: RingHistory
    public private(set) var battery = RingBattery(level: 64, charging: false)
    public private(set) var heartRateLogEnabled = true
    public private(set) var heartRateLogInterval = 5
    public private(set) var switches: [SwitchedMonitor: Bool] = [.spo2: true, .stress: false, .hrv: true]
    /// The clock the central last set, as the ring shows it.
    public private(set) var clock: RingDateTime?
    public private(set) var statistics = Statistics()
    private var faults: [Fault] = []
    private var link: Link?
    private var realTime: Task<Void, Never>?
    private var bigDataIn = BigDataReassembler()

    private struct Link {
        var mtu: ATTMTU
        var send: @Sendable ([UInt8]) async -> Void
        var sendBigData: (@Sendable ([UInt8]) async -> Void)?
    }

    /// `monitors`: settings to start with (the heart-rate log's, the SpO2 and stress switches);
    /// the rest keep the ring's defaults.
    public init(configuration: Configuration = Configuration(), history: RingHistory, monitors: [MonitorConfig] = []) {
        self.configuration = configuration
        self.history = history
        for config in monitors {
            if config.type == .heartRate, (1...255).contains(config.schedule.intervalMinutes) {
                heartRateLogEnabled = config.schedule.enabled
                heartRateLogInterval = Int(config.schedule.intervalMinutes)
            } else if let monitor = SwitchedMonitorConfig.monitor(for: config.type) {
                switches[monitor] = config.schedule.enabled
            }
        }
    }

    // MARK: What the wearer and the test do

    public func inject(_ fault: Fault) { faults.append(fault) }

    /// The battery changes: the ring pushes it (`73 0c`).
    public func setBattery(_ battery: RingBattery) async {
        self.battery = battery
        await send(QRingPacket(command: QRingCommand.notice, data: [0x0C, UInt8(battery.level), battery.charging ? 1 : 0]))
    }

    /// The heart-rate samples of the range a gateway must store: the log at the current settings.
    public func heartRateSamples(in range: Range<Int64>) -> [HeartRateSample] {
        var samples: [HeartRateSample] = []
        var day = RingDateTime(Date(timeIntervalSince1970: TimeInterval(range.lowerBound)), in: history.timeZone).date
        while day <= history.today {
            samples += history.heartRateSamples(day: day, intervalMinutes: heartRateLogInterval, enabled: heartRateLogEnabled)
            day = day.adding(days: 1)
        }
        return samples.filter { range.contains(Int64($0.time.timeIntervalSince1970)) }
    }

    // MARK: Links

    public func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {
        statistics.connections += 1
        link = Link(mtu: mtu, send: send)
        bigDataIn = BigDataReassembler()
    }

    public func centralConnectedSecondChannel(send: @escaping @Sendable ([UInt8]) async -> Void) async {
        link?.sendBigData = send
    }

    /// The link's ATT MTU changed (a BlueZ peripheral learns it from the central's writes): big-data
    /// replies are cut to its room from now on.
    public func linkMTUChanged(_ mtu: ATTMTU) {
        link?.mtu = mtu
    }

    public func centralDisconnected() async {
        link = nil
        realTime?.cancel()
        realTime = nil
    }

    // MARK: Device Information

    public nonisolated var standardCharacteristics: Set<StandardCharacteristic> { [.hardwareRevision, .firmwareRevision] }

    public func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        switch characteristic {
        case .hardwareRevision: Array(configuration.hardware.utf8)
        case .firmwareRevision: Array(configuration.firmware.utf8)
        default: throw TransportError.characteristicMissing(characteristic)
        }
    }

    public func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        throw TransportError.characteristicMissing(characteristic)
    }

    public func notifications(of characteristic: StandardCharacteristic) async -> AsyncStream<[UInt8]> { AsyncStream { $0.finish() } }

    // MARK: Commands

    public func centralWrote(_ chunk: [UInt8]) async {
        guard link != nil else { return }
        statistics.packetsReceived += 1
        guard chunk.count == QRingPacket.size, QRingPacket.checksum(chunk[0..<15]) == chunk[15] else {
            statistics.packetsRefused += 1
            return
        }
        let command = chunk[0], data = Array(chunk[1..<15])
        await respond(command, data)
        let startsOrStops = [QRingCommand.realTimeStart, QRingCommand.realTimeContinue, QRingCommand.realTimeStop].contains(command)
        if configuration.answersTwice && !startsOrStops { await respond(command, data) }
    }

    /// What the ring does for one packet on its command pair: a setting, an answer, a refusal.
    private func respond(_ command: UInt8, _ data: [UInt8]) async {
        switch command {
        case QRingCommand.setTime:
            setClock(data)
            // Byte 8 of the answer: the "new sleep protocol" (big-data sleep).
            await answer(QRingPacket(command: command, data: [0, 0, 0, 0, 0, 0, 0, 0, 1]))
        case QRingCommand.battery:
            await answer(QRingPacket(command: command, data: [UInt8(battery.level), battery.charging ? 1 : 0]))
        case QRingCommand.heartRateLogSettings:
            if data[0] == QRingCommand.settingWrite, data[1] == 1 || data[1] == 2, data[2] > 0 {
                heartRateLogEnabled = data[1] == 1
                heartRateLogInterval = Int(data[2])
                await answer(QRingPacket(command: command, data: [QRingCommand.settingWrite]))
            } else if data[0] == QRingCommand.settingRead {
                await answer(QRingPacket(command: command, data: [QRingCommand.settingRead, heartRateLogEnabled ? 1 : 2, UInt8(heartRateLogInterval)]))
            } else {
                await refuse(command)
            }
        case QRingCommand.heartRateLog:
            await heartRateLog(stamp: Int64(data[0]) | Int64(data[1]) << 8 | Int64(data[2]) << 16 | Int64(data[3]) << 24)
        case QRingCommand.steps:
            await steps(daysAgo: Int(data[0]))
        case QRingCommand.realTimeStart where data[0] == 1:
            startRealTime()
        case QRingCommand.realTimeContinue:
            break
        case QRingCommand.realTimeStop:
            realTime?.cancel()
            realTime = nil
        default:
            guard let monitor = QRingCommand.switchedMonitor(command: command) else {
                await refuse(command)
                return
            }
            if data[0] == QRingCommand.settingWrite, data[1] <= 1 {
                switches[monitor] = data[1] == 1
                await answer(QRingPacket(command: command, data: [QRingCommand.settingWrite]))
            } else if data[0] == QRingCommand.settingRead {
                await answer(QRingPacket(command: command, data: [QRingCommand.settingRead, switches[monitor] == true ? 1 : 0]))
            } else {
                await refuse(command)
            }
        }
    }

    private func setClock(_ data: [UInt8]) {
        func decimal(_ byte: UInt8) -> Int { Int(byte >> 4) * 10 + Int(byte & 0x0F) }
        let date = RingDate(year: 2000 + decimal(data[0]), month: decimal(data[1]), day: decimal(data[2]))
        clock = RingDateTime(date: date, secondOfDay: decimal(data[3]) * 3600 + decimal(data[4]) * 60 + decimal(data[5]))
    }

    /// 24 packets: the count, the day's stamp and 9 slots, then 13 slots each; `ff` when the ring
    /// has no log for that day.
    private func heartRateLog(stamp: Int64) async {
        statistics.heartRateLogRequests += 1
        let day = RingDate(daysSince1970: stamp / 86400)
        let command = QRingCommand.heartRateLog
        guard day >= history.firstLogDay, day <= history.today, heartRateLogEnabled else {
            await answer(QRingPacket(command: command, data: [0xFF]))
            return
        }
        let slots = history.heartRate(day: day, intervalMinutes: heartRateLogInterval, enabled: heartRateLogEnabled)
            .map { UInt8($0 ?? 0) } + [UInt8](repeating: 0, count: 7)
        var packets = [QRingPacket(command: command, data: [0, 24, 5])]
        let stampBytes = (0..<4).map { UInt8(truncatingIfNeeded: stamp >> (8 * $0)) }
        packets.append(QRingPacket(command: command, data: [1] + stampBytes + Array(slots[0..<9])))
        for index in 2..<24 {
            let first = 9 + (index - 2) * 13
            packets.append(QRingPacket(command: command, data: [UInt8(index)] + Array(slots[first..<first + 13])))
        }
        let dropped = takeFault { if case let .dropLogPacket(index) = $0 { index } else { nil } }
        for (index, packet) in packets.enumerated() where index != dropped { await answer(packet) }
    }

    /// `ff` when the day has no steps; else a header (calories in tens), then one packet a quarter-hour.
    private func steps(daysAgo: Int) async {
        statistics.stepsRequests += 1
        let day = history.today.adding(days: -daysAgo)
        let quarters = history.steps(day: day)
        let command = QRingCommand.steps
        guard !quarters.isEmpty, quarters.count <= 255 else {
            await answer(QRingPacket(command: command, data: [0xFF]))
            return
        }
        func bcd(_ value: Int) -> UInt8 { UInt8((value / 10) << 4 | value % 10) }
        func le(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        await answer(QRingPacket(command: command, data: [0xF0, UInt8(quarters.count), 1]))
        for (index, quarter) in quarters.enumerated() {
            await answer(QRingPacket(command: command, data: [bcd(day.year - 2000), bcd(day.month), bcd(day.day), UInt8(quarter.quarter),
                                                             UInt8(index), UInt8(quarters.count)]
                                         + le(quarter.calories / 10) + le(quarter.steps) + le(quarter.distanceMeters)))
        }
    }

    private func startRealTime() {
        realTime?.cancel()
        let interval = configuration.realTimeInterval
        realTime = Task { [weak self] in
            var reading = 0
            while !Task.isCancelled {
                guard let self else { return }
                // The first packet has no reading yet (0), as a ring's does.
                let bpm = reading == 0 ? 0 : 60 + (reading * 7) % 25
                await self.send(QRingPacket(command: QRingCommand.realTimeStart, data: [1, 0, UInt8(bpm)]))
                reading += 1
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// The ring could not carry the request out: bit 7 set in the command byte.
    private func refuse(_ command: UInt8) async {
        await answer(QRingPacket(command: command | QRingPacket.errorBit))
    }

    private func answer(_ packet: QRingPacket) async {
        var bytes = packet.bytes
        if takeFault({ if case .wrongChecksum(packet.command) = $0 { true } else { nil } }) != nil { bytes[15] &+= 1 }
        await sendBytes(bytes)
    }

    private func send(_ packet: QRingPacket) async { await sendBytes(packet.bytes) }

    private func sendBytes(_ bytes: [UInt8]) async {
        guard let link else { return }
        statistics.notificationsSent += 1
        await link.send(bytes)
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

    // MARK: Big data

    public func centralWroteSecondChannel(_ chunk: [UInt8]) async {
        for frame in bigDataIn.feed(chunk) where frame.type == BigDataFrame.sleepType {
            await sleepReply()
        }
    }

    /// Every night the ring holds, one day each: `[days ago][day bytes][start][end][pairs…]`.
    public func sleepPayload() -> [UInt8] {
        let zone = history.timeZone, today = history.today
        var payload: [UInt8] = [UInt8(history.nights.count)]
        for night in history.nights {
            let start = RingDateTime(Date(timeIntervalSince1970: TimeInterval(night.start)), in: zone)
            let end = RingDateTime(Date(timeIntervalSince1970: TimeInterval(night.end)), in: zone)
            let startMinute = start.secondOfDay / 60, endMinute = end.secondOfDay / 60
            let daysAgo = Int(today.daysSince1970 - end.date.daysSince1970)
            payload += [UInt8(daysAgo), UInt8(4 + 2 * night.pairs.count),
                        UInt8(startMinute & 0xFF), UInt8(startMinute >> 8), UInt8(endMinute & 0xFF), UInt8(endMinute >> 8)]
            for pair in night.pairs { payload += [pair.code, UInt8(pair.minutes)] }
        }
        return payload
    }

    private func sleepReply() async {
        statistics.sleepRequests += 1
        guard let link, let sendBigData = link.sendBigData else { return }
        var payload = sleepPayload()
        if takeFault({ $0 == .sleepDayOverrun ? true : nil }) != nil, let last = history.nights.last {
            // The last day claims two bytes more than the reply has left.
            payload[payload.count - (4 + 2 * last.pairs.count) - 1] &+= 2
        }
        var bytes = BigDataFrame(type: BigDataFrame.sleepType, payload: payload).bytes
        if takeFault({ $0 == .wrongCRC ? true : nil }) != nil { bytes[bytes.count - 1] ^= 0x01 }
        if takeFault({ $0 == .truncatedBigData ? true : nil }) != nil { bytes.removeLast(bytes.count / 3) }
        let size = configuration.bigDataChunkSize ?? link.mtu.chunkSize
        for offset in stride(from: 0, to: bytes.count, by: size) {
            guard self.link != nil else { return }
            statistics.notificationsSent += 1
            await sendBigData(Array(bytes[offset..<min(bytes.count, offset + size)]))
        }
    }
}
