import TSHuami

/// Heart rate (protocol-spec/huami/huami.md §5): the monitoring settings and a one-off measurement,
/// notified after `measurementDelay`.
extension SimulatedHuamiBand {
    func heartRateControl(_ command: HuamiHeartRateCommand) {
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

    func apply(_ command: HuamiHeartRateCommand) {
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
    func sendMeasurement() async {
        let bpm = measuredBPM
        statistics.heartRateMeasurements += 1
        say("heart rate measured: \(bpm) bpm")
        heartRateStreams.forEach { $0.yield([0x00, bpm]) }
        await send(.heartRateMeasurement, [0x00, bpm])
    }
}
