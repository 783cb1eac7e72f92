import Foundation
import TSDevice
import TSGATT
import TSHuami
import TSModels
import TSTransport

/// Clock, battery, alarms, heart-rate settings and live heart rate of a Huami band.
extension HuamiWatch {
    /// Current Time (`2A2B`): the wall-clock fields of the gateway's zone and that zone's offset (§3).
    public func syncTime() async throws {
        let now = Int64(configuration.now().timeIntervalSince1970)
        try await writeValue(HuamiTime(unixSeconds: now, zone: configuration.timeZone).currentTimeBytes, to: HuamiCharacteristic.currentTime)
    }

    /// The band's clock as it reads it now.
    public func clock() async throws -> HuamiTime {
        try HuamiTime(currentTimeBytes: try await readValue(HuamiCharacteristic.currentTime))
    }

    public func battery() async throws -> BatteryStatus {
        try HuamiBattery(bytes: try await readValue(HuamiCharacteristic.battery)).status
    }

    /// The table with its times (`ff 01 00 00 00`, answered in `80 01` chunks; §4.3).
    public func alarms() async throws -> [Alarm] {
        var assembler = HuamiConfigChunkAssembler()
        let payload = try await exchange(write: (nil, HuamiConfigRequest.alarmTable.bytes), what: "the alarm table") { channel, bytes -> [UInt8]? in
            guard channel == .configuration, case let .chunk(chunk) = try HuamiConfigAnswer(bytes: bytes) else { return nil }
            guard let whole = try assembler.feed(chunk), whole.type == HuamiAlarmTable.chunkType else { return nil }
            return whole.payload
        }
        return try HuamiAlarmTable.alarms(payload: payload).map(\.alarm).sorted { $0.slot < $1.slot }
    }

    /// Checked before anything is sent: a band shows no label or remark and has no smart wake
    /// (each refused as not supported, with the alarm it is on), holds slots 0 … 9. Then every
    /// slot is written: the table's alarms, the other slots cleared.
    public func setAlarms(_ alarms: [Alarm]) async throws {
        guard connection != nil else { throw WatchError.notConnected }
        for alarm in alarms {
            if !alarm.label.isEmpty {
                throw unsupported("alarm labels: the alarm in slot \(alarm.slot) has the label \"\(alarm.label)\"; set it again without --label")
            }
            if !alarm.remark.isEmpty { throw unsupported("alarm remarks: the alarm in slot \(alarm.slot) has one") }
            if alarm.smartWindow > 0 { throw unsupported("a smart-wake window: the alarm in slot \(alarm.slot) has one of \(alarm.smartWindow) minutes") }
        }
        let problems = alarms.problems(limits: HuamiAlarm.limits)
        guard problems.isEmpty else { throw WatchError.invalidAlarms(problems) }
        var bySlot: [UInt8: HuamiAlarm] = [:]
        for alarm in alarms { bySlot[alarm.slot] = try HuamiAlarm(alarm) }
        for slot in 0..<UInt8(HuamiAlarm.slots) {
            let request: HuamiConfigRequest = bySlot[slot].map { .setAlarm($0) } ?? .clearAlarm(slot: slot)
            try await exchange(write: (nil, request.bytes), what: "setting alarm slot \(slot)") { channel, bytes -> Void? in
                guard channel == .configuration, case let .alarmSet(status) = try HuamiConfigAnswer(bytes: bytes) else { return nil }
                guard status == 0x01 else { throw HuamiError(.invalidValue, "the band answered setting alarm slot \(slot) with status \(status)") }
                return ()
            }
        }
    }

    /// What `monitor set` wrote through this central: a band does not report its heart-rate
    /// settings (protocol-spec/huami/huami.md §5); before a write, `MonitorSettingNotReported` (the
    /// watch service then answers with the one it last wrote, from the store).
    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        guard Self.monitorTypes.contains(type) else { throw unsupported("a \(type.name) monitor setting") }
        guard connection != nil else { throw WatchError.notConnected }
        guard let written = writtenMonitors[type] else { throw MonitorSettingNotReported(type: type) }
        return written
    }

    /// `heartRate`: the all-day interval (disabled: 0); `sleep`: heart rate measured during sleep.
    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        guard Self.monitorTypes.contains(config.type) else { throw unsupported("a \(config.type.name) monitor setting") }
        let command: HuamiHeartRateCommand
        do {
            command = try HuamiHeartRateCommand(config)
        } catch {
            throw error.code == .windowNotSupported ? unsupported(error.message) : error
        }
        try await writeValue(command.bytes, to: HuamiCharacteristic.heartRateControlPoint)
        writtenMonitors[config.type] = config
    }

    /// Heart Rate Measurement (`2A37`) while a one-off measurement runs, started again every
    /// `measurementRestart` (a band measures once per start), until the link ends or the stream is dropped.
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement> {
        guard let link = connection else { throw WatchError.notConnected }
        let values = try await link.notifications(of: HuamiCharacteristic.heartRateMeasurement)
        let (stream, continuation) = AsyncStream.makeStream(of: HeartRateMeasurement.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        heartRateStreams[id] = HeartRateSubscriber(continuation: continuation, malformed: malformed)
        let reader = Task { [weak self] in
            for await value in values { await self?.heartRateValue(value) }
        }
        let starter = Task { [weak self] in
            while !Task.isCancelled {
                try? await self?.writeValue(HuamiHeartRateCommand.manualMeasurement(true).bytes, to: HuamiCharacteristic.heartRateControlPoint)
                try? await Task.sleep(for: Self.measurementRestart)
            }
        }
        continuation.onTermination = { [weak self] _ in
            reader.cancel()
            starter.cancel()
            Task { await self?.dropHeartRateStream(id) }
        }
        return stream
    }

    static let measurementRestart: Duration = .seconds(10)

    private func heartRateValue(_ value: [UInt8]) {
        do {
            let measurement = try HeartRateMeasurement(value: value)
            heartRateStreams.values.forEach { $0.continuation.yield(measurement) }
        } catch {
            heartRateStreams.values.forEach { $0.malformed?(error) }
        }
    }

    private func dropHeartRateStream(_ id: UUID) {
        heartRateStreams[id] = nil
    }

    // MARK: Reads and writes

    func readValue(_ characteristic: GATTCharacteristicID) async throws -> [UInt8] {
        await takeTurn()
        defer { endTurn() }
        guard let link = connection else { throw WatchError.notConnected }
        do {
            return try await link.read(characteristic)
        } catch let error as TransportError {
            throw error.category == .unavailable ? WatchError.disconnected(error.description) : error
        }
    }

    func writeValue(_ value: [UInt8], to characteristic: GATTCharacteristicID) async throws {
        await takeTurn()
        defer { endTurn() }
        try await send((characteristic, value))
    }
}
