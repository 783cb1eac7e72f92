import Foundation
import TSDevice
import TSGATT
import TSGarmin
import TSModels

/// Real-time heart rate (protocol-spec/garmin/garmin.md §2.2): multi-link service 6 registered on
/// its own handle and started with `<h> 01`; each notification on the handle is `<h> <type> <bpm>
/// <resting> …`. Stopped (`<h> 00`, then CLOSE_HANDLE) when the last subscriber leaves.
extension GarminWatch {
    public func heartRateMeasurements(malformed: (@Sendable (StandardValueError) -> Void)?) async throws -> AsyncStream<HeartRateMeasurement> {
        guard connection != nil else { throw WatchError.notConnected }
        // The listener comes first: a watch streams from the registration on (`received` takes
        // the handle from the registration's answer), and a reading that came before it would be lost.
        let (stream, continuation) = AsyncStream.makeStream(of: HeartRateMeasurement.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        heartRateSubscribers[id] = HeartRateSubscriber(continuation: continuation, malformed: malformed)
        if heartRateHandle == nil {
            do {
                let handle = try await registerService(MultiLinkControl.Service.realtimeHeartRate, what: "real-time heart rate (service 6)")
                heartRateHandle = handle
                try await writeOnHandle([handle, 1])
            } catch {
                heartRateSubscribers[id] = nil
                continuation.finish()
                throw error
            }
        }
        continuation.onTermination = { [weak self] _ in Task { await self?.heartRateSubscriberLeft(id) } }
        return stream
    }

    /// Registers a multi-link service and returns the handle the watch gave it.
    func registerService(_ service: UInt16, what: String) async throws -> UInt8 {
        try await exchange(control: .registerRequest(client: MultiLinkControl.hostClient, service: service, reliable: 0), what: what) { delivery in
            guard case let .control(.registerResponse(_, answered, status, handle, _)) = delivery, answered == service else { return nil }
            guard status == 0 else { throw WatchError.unsupported("\(what): the watch refused its registration (status \(status))") }
            return handle
        }
    }

    func writeOnHandle(_ bytes: [UInt8]) async throws {
        await takeTurn()
        defer { endTurn() }
        guard let link = connection else { throw WatchError.notConnected }
        try await link.write(bytes)
    }

    private func heartRateSubscriberLeft(_ id: UUID) async {
        guard heartRateSubscribers.removeValue(forKey: id) != nil, heartRateSubscribers.isEmpty, let handle = heartRateHandle, connection != nil else { return }
        heartRateHandle = nil
        try? await writeOnHandle([handle, 0])
        _ = try? await exchange(control: .closeHandleRequest(client: MultiLinkControl.hostClient, service: MultiLinkControl.Service.realtimeHeartRate, handle: handle),
                                what: "closing real-time heart rate") { delivery in
            if case .control(.closeHandleResponse) = delivery { return () }
            return nil
        }
    }

    /// A packet on the heart-rate handle.
    func heartRateReading(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else {
            let problem = StandardValueError(.heartRateMeasurement, "a real-time heart-rate packet of \(bytes.count) bytes from the watch; it has at least 4")
            heartRateSubscribers.values.forEach { $0.malformed?(problem) }
            return
        }
        // bpm 0 or 255: no reading yet.
        guard bytes[2] != 0, bytes[2] != 0xFF else { return }
        let measurement = HeartRateMeasurement(bpm: UInt16(bytes[2]), sensorContact: .detected)
        heartRateSubscribers.values.forEach { $0.continuation.yield(measurement) }
    }
}
