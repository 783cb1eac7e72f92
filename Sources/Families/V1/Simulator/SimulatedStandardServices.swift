import Foundation
import TSGATT
import TSModels
import TSProtocol
import TSSimulatedHistory
import TSTransport

/// The simulated watch's standard services beside protocol v1: Device Information, Battery
/// (read and notify), Current Time (read and write) and Heart Rate, whose rate follows the stage
/// of the simulated night (deep sleep slowest, awake fastest). No D-Bus: the loopback link and
/// the BlueZ peripheral both serve it.
public actor SimulatedStandardServices: StandardServicesEndpoint {
    public nonisolated let standardCharacteristics: Set<StandardCharacteristic>
    public let deviceInformation: StandardDeviceInformation
    public private(set) var batteryLevel: UInt8
    public private(set) var stage: SleepStage = .awake
    /// The last Current Time and Local Time Information a central wrote.
    public private(set) var writtenTime: CurrentTimeValue?
    public private(set) var writtenLocalTime: LocalTimeInformationValue?
    private var beat = 0
    private var subscribers: [StandardCharacteristic: [UUID: AsyncStream<[UInt8]>.Continuation]] = [:]

    public static let defaultInformation = StandardDeviceInformation(
        manufacturer: "tsgateway project", model: "TS-Sim W10", serialNumber: "SIM-0001", hardwareRevision: "1", firmwareRevision: "1.4.2", softwareRevision: "tsgateway simulator")

    public init(characteristics: Set<StandardCharacteristic> = Set(StandardCharacteristic.allCases),
                deviceInformation: StandardDeviceInformation = SimulatedStandardServices.defaultInformation, batteryLevel: UInt8 = 82) {
        standardCharacteristics = characteristics
        self.deviceInformation = deviceInformation
        self.batteryLevel = min(batteryLevel, 100)
    }

    /// The rate the simulated wearer's heart beats at in `stage`, with a small deterministic wobble.
    public static func heartRate(in stage: SleepStage, beat: Int) -> UInt16 {
        let base: Int = switch stage {
        case .deep: 52
        case .light: 58
        case .rem: 64
        case .awake: 72
        }
        return UInt16(base + [0, 2, 4, 3, 1, -1][beat % 6])
    }

    /// The measurement the watch sends next: the stage's rate, contact detected, one RR interval.
    public func nextMeasurement() -> HeartRateMeasurement {
        let bpm = Self.heartRate(in: stage, beat: beat)
        beat += 1
        return HeartRateMeasurement(bpm: bpm, sensorContact: .detected, rrIntervals: [UInt16(61_440 / Int(bpm))])
    }

    public func setStage(_ stage: SleepStage) { self.stage = stage }

    /// Notifies one Heart Rate Measurement to every subscriber.
    public func beatOnce() { notify(nextMeasurement().value, on: .heartRateMeasurement) }

    /// Notifies Heart Rate Measurements every `period` until cancelled; with a `night`, each
    /// beat first takes the stage the replayed night has reached.
    public func beat(every period: Duration, following night: NightReplay? = nil) async {
        while (try? await Task.sleep(for: period)) != nil {
            if let night { stage = night.stage(atBeat: beat) }
            beatOnce()
        }
    }

    public func setBatteryLevel(_ level: UInt8) {
        batteryLevel = min(level, 100)
        notify([batteryLevel], on: .batteryLevel)
    }

    /// Sends `value` as it is, malformed or not (tests, fault injection).
    public func notify(_ value: [UInt8], on characteristic: StandardCharacteristic) {
        for continuation in (subscribers[characteristic] ?? [:]).values { continuation.yield(value) }
    }

    public func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        guard standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        switch characteristic {
        case .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision:
            return Array((deviceInformation[characteristic] ?? "").utf8)
        case .batteryLevel: return [batteryLevel]
        case .currentTime: return (writtenTime ?? CurrentTimeValue(Date(), in: TimeZone(secondsFromGMT: 0) ?? .current)).value
        case .localTimeInformation: return (writtenLocalTime ?? LocalTimeInformationValue(timeZone: 0, dstOffset: 0)).value
        case .heartRateMeasurement: throw SimulatedStandardError.notReadable(characteristic)
        case .bodySensorLocation: return [BodySensorLocation.wrist.rawValue]
        }
    }

    public func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        guard standardCharacteristics.contains(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        switch characteristic {
        case .currentTime: writtenTime = try CurrentTimeValue(value: value)
        case .localTimeInformation: writtenLocalTime = try LocalTimeInformationValue(value: value)
        default: throw SimulatedStandardError.notWritable(characteristic)
        }
    }

    public func notifications(of characteristic: StandardCharacteristic) async -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        subscribers[characteristic, default: [:]][id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(characteristic, id) } }
        return stream
    }

    /// How many centrals listen to `characteristic` now.
    public func subscriberCount(_ characteristic: StandardCharacteristic) -> Int { subscribers[characteristic]?.count ?? 0 }

    private func unsubscribe(_ characteristic: StandardCharacteristic, _ id: UUID) {
        subscribers[characteristic]?[id] = nil
    }
}

public enum SimulatedStandardError: CategorizedError, Sendable, CustomStringConvertible {
    case notReadable(StandardCharacteristic)
    case notWritable(StandardCharacteristic)

    public var category: ErrorCategory { .notSupported }
    public var description: String {
        switch self {
        case let .notReadable(characteristic): "\(characteristic.title) cannot be read"
        case let .notWritable(characteristic): "\(characteristic.title) cannot be written"
        }
    }
}
