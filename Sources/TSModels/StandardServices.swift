import Foundation

/// A GATT service a watch may expose that tsgateway can use: protocol v1's vendor service, or
/// one of the Bluetooth SIG's standard services. What a watch offers is the set of these it
/// has, learned from GATT discovery on connect.
public enum WatchService: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The vendor service of wire protocol v1: alarms, monitors, sleep, live stages.
    case protocolV1 = "protocol-v1"
    /// Device Information (0x180A): manufacturer, model, serial, revisions.
    case deviceInformation = "device-information"
    /// Battery (0x180F): Battery Level, read and notify.
    case battery
    /// Current Time (0x1805): the watch's clock, writable on most watches.
    case currentTime = "current-time"
    /// Heart Rate (0x180D): Heart Rate Measurement notifications.
    case heartRate = "heart-rate"

    /// One of the Bluetooth SIG's standard services (not a dialect's own).
    public var isStandard: Bool { self != .protocolV1 }

    public static func < (lhs: WatchService, rhs: WatchService) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }

    /// How `info` names the service.
    public var title: String {
        switch self {
        case .protocolV1: "protocol v1"
        case .deviceInformation: "device information"
        case .battery: "battery"
        case .currentTime: "current time"
        case .heartRate: "heart rate"
        }
    }
}

/// The services a connected watch has. Encoded as a sorted JSON array of service names
/// (`["battery", "heart-rate"]`).
public struct ServiceSet: Sendable, Hashable, Codable, Sequence {
    public private(set) var members: Set<WatchService>

    public init(_ members: some Sequence<WatchService>) { self.members = Set(members) }

    /// A protocol-v1 watch whose standard services are unknown (the simulator over loopback,
    /// captures recorded before services were discovered).
    public static let protocolV1Only = ServiceSet([.protocolV1])

    public func contains(_ service: WatchService) -> Bool { members.contains(service) }
    public var sorted: [WatchService] { members.sorted() }
    public var isEmpty: Bool { members.isEmpty }
    public func makeIterator() -> IndexingIterator<[WatchService]> { sorted.makeIterator() }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        members = Set(try container.decode([WatchService].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(sorted)
    }
}

/// The strings of a Device Information service (0x180A); nil for a characteristic the watch
/// does not have.
public struct StandardDeviceInformation: Sendable, Hashable, Codable {
    public var manufacturer: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareRevision: String?
    public var firmwareRevision: String?
    public var softwareRevision: String?

    public init(manufacturer: String? = nil, model: String? = nil, serialNumber: String? = nil,
                hardwareRevision: String? = nil, firmwareRevision: String? = nil, softwareRevision: String? = nil) {
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
    }

    public var isEmpty: Bool { self == StandardDeviceInformation() }
}

/// The Sensor Contact Status bits of a Heart Rate Measurement.
public enum SensorContact: String, Sendable, Hashable, Codable, CaseIterable {
    /// The sensor cannot tell whether it touches the skin.
    case notSupported = "not-supported"
    case notDetected = "not-detected"
    case detected
}

/// One Heart Rate Measurement (0x2A37) as the watch sent it.
public struct HeartRateMeasurement: Sendable, Hashable, Codable {
    /// Beats per minute.
    public var bpm: UInt16
    public var sensorContact: SensorContact
    /// Energy expended since the last reset, in kilojoules; nil when the value has none.
    public var energyExpended: UInt16?
    /// RR intervals in units of 1/1024 s, oldest first; empty when the value has none.
    public var rrIntervals: [UInt16]
    /// The value used the 16-bit heart-rate format.
    public var wideFormat: Bool

    public init(bpm: UInt16, sensorContact: SensorContact = .notSupported, energyExpended: UInt16? = nil, rrIntervals: [UInt16] = [], wideFormat: Bool = false) {
        self.bpm = bpm
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.wideFormat = wideFormat
    }

    /// The RR intervals in seconds.
    public var rrIntervalSeconds: [Double] { rrIntervals.map { Double($0) / 1024 } }
}

/// Body Sensor Location (0x2A38); values the specification reserves are kept as `.other`.
public enum BodySensorLocation: UInt8, Sendable, Hashable, Codable, CaseIterable {
    case other = 0, chest, wrist, finger, hand, earLobe, foot
}

/// A heart-rate sample the gateway received, as stored and published.
public struct HeartRateSample: Sendable, Hashable, Codable {
    /// When the gateway received it.
    public var time: Date
    public var bpm: Int
    public var sensorContact: SensorContact
    public var energyExpended: Int?
    /// RR intervals in 1/1024 s.
    public var rrIntervals: [Int]

    public init(time: Date, bpm: Int, sensorContact: SensorContact = .notSupported, energyExpended: Int? = nil, rrIntervals: [Int] = []) {
        self.time = time
        self.bpm = bpm
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    public init(_ measurement: HeartRateMeasurement, at time: Date) {
        self.init(time: time, bpm: Int(measurement.bpm), sensorContact: measurement.sensorContact,
                  energyExpended: measurement.energyExpended.map(Int.init), rrIntervals: measurement.rrIntervals.map(Int.init))
    }
}

/// Minimum, average and maximum heart rate over a span (a night segment), from the samples the
/// gateway stored.
public struct HeartRateSummary: Sendable, Hashable, Codable {
    public var minimum: Int
    /// Mean of the samples' beats per minute, rounded to one decimal.
    public var average: Double
    public var maximum: Int
    public var samples: Int

    public init(minimum: Int, average: Double, maximum: Int, samples: Int) {
        self.minimum = minimum
        self.average = average
        self.maximum = maximum
        self.samples = samples
    }

    /// The summary of `samples`; nil when there are none.
    public init?(_ samples: some Collection<HeartRateSample>) {
        guard let first = samples.first else { return nil }
        var minimum = first.bpm, maximum = first.bpm, total = 0
        for sample in samples {
            minimum = min(minimum, sample.bpm)
            maximum = max(maximum, sample.bpm)
            total += sample.bpm
        }
        self.init(minimum: minimum, total: total, maximum: maximum, samples: samples.count)
    }

    /// The summary of `samples` samples whose beats per minute add up to `total` (as a
    /// database aggregates them); nil when there are none.
    public init?(minimum: Int, total: Int, maximum: Int, samples: Int) {
        guard samples > 0 else { return nil }
        self.init(minimum: minimum, average: (Double(total) / Double(samples) * 10).rounded() / 10, maximum: maximum, samples: samples)
    }
}
