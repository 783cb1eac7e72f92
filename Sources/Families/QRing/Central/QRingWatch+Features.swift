import Foundation
import TSDevice
import TSGATT
import TSModels
import TSQRing

/// Clock, battery, monitor settings and real-time heart rate of a QRing ring.
extension QRingWatch {
    /// Writes the gateway zone's wall-clock time (protocol-spec/qring/qring.md §7).
    public func syncTime() async throws {
        let packet = try QRingRequest.setTime(at: configuration.now(), in: configuration.timeZone)
        guard case let .timeSet(newSleep) = try await request(packet) else { throw unexpectedAnswer(to: packet) }
        newSleepProtocol = newSleep
    }

    public func battery() async throws -> BatteryStatus {
        guard case let .battery(battery) = try await request(QRingRequest.battery) else { throw unexpectedAnswer(to: QRingRequest.battery) }
        return BatteryStatus(level: UInt8(battery.level), state: battery.charging ? .charging : .discharging)
    }

    /// Levels the ring pushes on its own (notice `73 0c`).
    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> {
        guard connection != nil else { throw WatchError.notConnected }
        return batteryLevels.subscribe()
    }

    // MARK: Monitor settings

    /// Heart rate: the heart-rate log's settings; SpO2 and stress: their all-day switches.
    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        if type == .heartRate {
            let packet = QRingRequest.heartRateLogSettingsRead
            let answer = try await request(packet) { if case .heartRateLogSettings = $0 { true } else { false } }
            guard case let .heartRateLogSettings(config) = answer else { throw unexpectedAnswer(to: packet) }
            return config
        }
        guard let monitor = SwitchedMonitorConfig.monitor(for: type), let config = SwitchedMonitorConfig.config(monitor, enabled: try await isSwitchedOn(monitor)) else {
            throw WatchError.unsupported("a \(type.name) monitor setting (a QRing ring has heart rate, spo2 and stress)")
        }
        return config
    }

    /// Checked against what the ring can hold (all day, no alert; a switch's interval is the
    /// ring's) before anything is sent.
    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        guard Self.monitorTypes.contains(config.type) else {
            throw WatchError.unsupported("a \(config.type.name) monitor setting (a QRing ring has heart rate, spo2 and stress)")
        }
        if let problem = config.problem { throw WatchError.invalidMonitorConfig(config.type, problem) }
        if config.type == .heartRate {
            let packet = try QRingRequest.heartRateLogSettingsWrite(config)
            let answer = try await request(packet) { if case .heartRateLogSettingsWritten = $0 { true } else { false } }
            guard case .heartRateLogSettingsWritten = answer else { throw unexpectedAnswer(to: packet) }
        } else {
            let packet = try SwitchedMonitorConfig.write(config)
            let answer = try await request(packet) { if case .monitorSwitchWritten = $0 { true } else { false } }
            guard case .monitorSwitchWritten = answer else { throw unexpectedAnswer(to: packet) }
        }
    }

    /// An all-day switch, HRV included (which has no `MonitorType`).
    public func isSwitchedOn(_ monitor: SwitchedMonitor) async throws -> Bool {
        let packet = QRingRequest.switchRead(monitor)
        let answer = try await request(packet) { if case let .monitorSwitch(answered, _) = $0 { answered == monitor } else { false } }
        guard case let .monitorSwitch(answered, enabled) = answer, answered == monitor else { throw unexpectedAnswer(to: packet) }
        return enabled
    }

    public func setSwitch(_ monitor: SwitchedMonitor, on enabled: Bool) async throws {
        let packet = QRingRequest.switchWrite(monitor, enabled: enabled)
        let answer = try await request(packet) { if case .monitorSwitchWritten(monitor) = $0 { true } else { false } }
        guard case .monitorSwitchWritten(monitor) = answer else { throw unexpectedAnswer(to: packet) }
    }

    func unexpectedAnswer(to packet: QRingPacket) -> WatchError {
        .protocolViolation("the ring answered \(Self.name(of: packet.command)) with a packet that is not its answer")
    }

    // MARK: Real-time heart rate

    /// Starts the ring's real-time measurement for the first subscriber and stops it when the
    /// last one leaves; a damaged reading goes to `malformed` and is counted, never delivered.
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement> {
        guard connection != nil else { throw WatchError.notConnected }
        let (stream, continuation) = AsyncStream.makeStream(of: HeartRateMeasurement.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        let first = heartRateStreams.isEmpty
        heartRateStreams[id] = HeartRateSubscriber(continuation: continuation, malformed: malformed)
        continuation.onTermination = { [weak self] _ in Task { await self?.heartRateSubscriberLeft(id) } }
        if first {
            try await send(QRingRequest.realTimeStart)
            keepRealTimeGoing()
        }
        return stream
    }

    /// The ring ends a measurement on its own after a while; colmi-r02-client keeps it going with `1e 33`.
    private func keepRealTimeGoing() {
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: .seconds(10))
                guard let self, await self.hasHeartRateSubscribers else { return }
                try? await self.send(QRingRequest.realTimeContinue)
            }
        }
    }

    private var hasHeartRateSubscribers: Bool { !heartRateStreams.isEmpty && connection != nil }

    private func heartRateSubscriberLeft(_ id: UUID) async {
        guard heartRateStreams.removeValue(forKey: id) != nil, heartRateStreams.isEmpty, connection != nil else { return }
        try? await send(QRingRequest.realTimeStop)
    }

    func realTimeReading(_ bytes: [UInt8]) {
        let answer: QRingAnswer
        do {
            answer = try QRingAnswer(packet: bytes)
        } catch {
            dropped.heartRatePackets += 1
            let problem = StandardValueError(.heartRateMeasurement, "a real-time heart-rate packet from the ring: \(error)")
            heartRateStreams.values.forEach { $0.malformed?(problem) }
            return
        }
        // bpm 0: no reading yet; an error code: the ring is worn wrongly or has no data for now.
        guard case let .realTimeHeartRate(bpm) = answer, bpm > 0 else { return }
        let measurement = HeartRateMeasurement(bpm: UInt16(bpm), sensorContact: .detected)
        heartRateStreams.values.forEach { $0.continuation.yield(measurement) }
    }
}
