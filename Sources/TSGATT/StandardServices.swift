import Foundation
import TSModels

// The Bluetooth SIG's standard services a watch may offer beside protocol v1, and the pure
// codecs of their characteristics (GATT Specification Supplement; Heart Rate Service 1.0,
// Battery Service 1.0, Current Time Service 1.1, Device Information Service 1.1). No I/O.

/// A 16-bit SIG UUID in the 128-bit form BlueZ reports (lower case).
public func bluetoothBaseUUID(_ short: UInt16) -> String {
    let digits = String(short, radix: 16)
    return "0000" + String(repeating: "0", count: 4 - digits.count) + digits + "-0000-1000-8000-00805f9b34fb"
}

extension WatchService {
    /// The GATT service UUID.
    public var uuid: String {
        switch self {
        case .protocolV1: WatchGATT.service
        case .deviceInformation: bluetoothBaseUUID(0x180A)
        case .battery: bluetoothBaseUUID(0x180F)
        case .currentTime: bluetoothBaseUUID(0x1805)
        case .heartRate: bluetoothBaseUUID(0x180D)
        }
    }

    /// The service of a GATT service UUID (any case), or nil for one tsgateway does not use.
    public init?(uuid: String) {
        guard let found = Self.allCases.first(where: { $0.uuid == uuid.lowercased() }) else { return nil }
        self = found
    }
}

/// The standard characteristics tsgateway reads, writes or subscribes to.
public enum StandardCharacteristic: String, Sendable, Hashable, CaseIterable {
    case manufacturerName, modelNumber, serialNumber, hardwareRevision, firmwareRevision, softwareRevision
    case batteryLevel
    case currentTime, localTimeInformation
    case heartRateMeasurement, bodySensorLocation

    public var shortUUID: UInt16 {
        switch self {
        case .manufacturerName: 0x2A29
        case .modelNumber: 0x2A24
        case .serialNumber: 0x2A25
        case .hardwareRevision: 0x2A27
        case .firmwareRevision: 0x2A26
        case .softwareRevision: 0x2A28
        case .batteryLevel: 0x2A19
        case .currentTime: 0x2A2B
        case .localTimeInformation: 0x2A0F
        case .heartRateMeasurement: 0x2A37
        case .bodySensorLocation: 0x2A38
        }
    }

    public var uuid: String { bluetoothBaseUUID(shortUUID) }

    public var service: WatchService {
        switch self {
        case .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision: .deviceInformation
        case .batteryLevel: .battery
        case .currentTime, .localTimeInformation: .currentTime
        case .heartRateMeasurement, .bodySensorLocation: .heartRate
        }
    }

    /// The specification's name, for messages.
    public var title: String {
        switch self {
        case .manufacturerName: "Manufacturer Name String"
        case .modelNumber: "Model Number String"
        case .serialNumber: "Serial Number String"
        case .hardwareRevision: "Hardware Revision String"
        case .firmwareRevision: "Firmware Revision String"
        case .softwareRevision: "Software Revision String"
        case .batteryLevel: "Battery Level"
        case .currentTime: "Current Time"
        case .localTimeInformation: "Local Time Information"
        case .heartRateMeasurement: "Heart Rate Measurement"
        case .bodySensorLocation: "Body Sensor Location"
        }
    }

    /// The Device Information strings, in the order `info` shows them.
    public static let deviceInformationStrings: [StandardCharacteristic] = [
        .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision,
    ]
}

/// A standard characteristic's value that breaks its specification.
public struct StandardValueError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var characteristic: StandardCharacteristic
    public var reason: String

    public init(_ characteristic: StandardCharacteristic, _ reason: String) {
        self.characteristic = characteristic
        self.reason = reason
    }

    public var category: ErrorCategory { .protocolError }
    public var description: String { "malformed \(characteristic.title) value: \(reason)" }
}

// MARK: Heart Rate Measurement (0x2A37)

extension HeartRateMeasurement {
    /// The Flags field's bits.
    public enum Flag {
        public static let wideValue: UInt8 = 0x01
        public static let contactDetected: UInt8 = 0x02
        public static let contactSupported: UInt8 = 0x04
        public static let energyExpended: UInt8 = 0x08
        public static let rrIntervals: UInt8 = 0x10
    }

    /// Parses one value: Flags, then the heart rate (8 or 16 bits), Energy Expended when its
    /// flag is set, then one or more RR intervals when theirs is. Reserved flag bits are
    /// ignored; any other length than the flags call for is refused.
    public init(value bytes: [UInt8]) throws(StandardValueError) {
        func malformed(_ reason: String) -> StandardValueError { StandardValueError(.heartRateMeasurement, reason) }
        guard let flags = bytes.first else { throw malformed("empty (no Flags field)") }
        var at = 1
        func u16(_ field: String) throws(StandardValueError) -> UInt16 {
            guard bytes.count - at >= 2 else { throw malformed("ends inside \(field) at byte \(at) of \(bytes.count)") }
            defer { at += 2 }
            return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
        }
        let wide = flags & Flag.wideValue != 0
        let bpm: UInt16
        if wide {
            bpm = try u16("the 16-bit heart rate")
        } else {
            guard bytes.count > at else { throw malformed("ends before the 8-bit heart rate") }
            bpm = UInt16(bytes[at])
            at += 1
        }
        let contact: SensorContact = flags & Flag.contactSupported == 0 ? .notSupported : (flags & Flag.contactDetected != 0 ? .detected : .notDetected)
        let energy = flags & Flag.energyExpended != 0 ? try u16("Energy Expended") : nil
        var intervals: [UInt16] = []
        if flags & Flag.rrIntervals != 0 {
            let left = bytes.count - at
            guard left >= 2 else { throw malformed("the RR-Interval flag is set but no interval follows") }
            guard left % 2 == 0 else { throw malformed("\(left) bytes of RR intervals is not a whole number of 16-bit intervals") }
            while at < bytes.count { intervals.append(try u16("an RR interval")) }
        }
        guard at == bytes.count else { throw malformed("\(bytes.count - at) byte(s) after the fields its flags announce") }
        self.init(bpm: bpm, sensorContact: contact, energyExpended: energy, rrIntervals: intervals, wideFormat: wide)
    }

    /// The value as a heart-rate sensor sends it: the 16-bit format when `wideFormat` is set or
    /// the rate does not fit 8 bits.
    public var value: [UInt8] {
        let wide = wideFormat || bpm > 0xFF
        var flags: UInt8 = wide ? Flag.wideValue : 0
        switch sensorContact {
        case .notSupported: break
        case .notDetected: flags |= Flag.contactSupported
        case .detected: flags |= Flag.contactSupported | Flag.contactDetected
        }
        if energyExpended != nil { flags |= Flag.energyExpended }
        if !rrIntervals.isEmpty { flags |= Flag.rrIntervals }
        var bytes: [UInt8] = [flags]
        func put(_ value: UInt16) { bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
        if wide { put(bpm) } else { bytes.append(UInt8(truncatingIfNeeded: bpm)) }
        if let energyExpended { put(energyExpended) }
        rrIntervals.forEach(put)
        return bytes
    }
}

extension BodySensorLocation {
    public init(value bytes: [UInt8]) throws(StandardValueError) {
        guard bytes.count == 1 else { throw StandardValueError(.bodySensorLocation, "\(bytes.count) bytes, expected 1") }
        self = BodySensorLocation(rawValue: bytes[0]) ?? .other
    }
}

// MARK: Battery Level (0x2A19)

public enum BatteryLevelValue {
    /// The level in percent: one byte, 0…100.
    public static func decode(_ bytes: [UInt8]) throws(StandardValueError) -> UInt8 {
        guard bytes.count == 1 else { throw StandardValueError(.batteryLevel, "\(bytes.count) bytes, expected 1") }
        guard bytes[0] <= 100 else { throw StandardValueError(.batteryLevel, "\(bytes[0]) % is above 100 %") }
        return bytes[0]
    }
}

// MARK: Device Information strings

public enum DeviceInformationString {
    /// A UTF-8 string characteristic; trailing NULs (padding some watches send) are dropped and
    /// invalid UTF-8 is refused.
    public static func decode(_ bytes: [UInt8], _ characteristic: StandardCharacteristic) throws(StandardValueError) -> String {
        var end = bytes.count
        while end > 0 && bytes[end - 1] == 0 { end -= 1 }
        guard let text = String(validating: bytes[0..<end], as: UTF8.self) else {
            throw StandardValueError(characteristic, "not valid UTF-8")
        }
        return text
    }
}

extension StandardDeviceInformation {
    public subscript(_ characteristic: StandardCharacteristic) -> String? {
        get {
            switch characteristic {
            case .manufacturerName: manufacturer
            case .modelNumber: model
            case .serialNumber: serialNumber
            case .hardwareRevision: hardwareRevision
            case .firmwareRevision: firmwareRevision
            case .softwareRevision: softwareRevision
            default: nil
            }
        }
        set {
            switch characteristic {
            case .manufacturerName: manufacturer = newValue
            case .modelNumber: model = newValue
            case .serialNumber: serialNumber = newValue
            case .hardwareRevision: hardwareRevision = newValue
            case .firmwareRevision: firmwareRevision = newValue
            case .softwareRevision: softwareRevision = newValue
            default: break
            }
        }
    }
}

// MARK: Current Time (0x2A2B) and Local Time Information (0x2A0F)

/// The Adjust Reason bits of a Current Time value.
public struct TimeAdjustReason: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let manualUpdate = TimeAdjustReason(rawValue: 0x01)
    public static let externalReference = TimeAdjustReason(rawValue: 0x02)
    public static let timeZoneChange = TimeAdjustReason(rawValue: 0x04)
    public static let daylightSavingChange = TimeAdjustReason(rawValue: 0x08)
}

/// A Current Time value: Exact Time 256 (Day Date Time and Fractions256) and Adjust Reason,
/// ten bytes. The date and time are local time in the zone the watch shows.
public struct CurrentTimeValue: Sendable, Hashable {
    public var year: UInt16
    public var month: UInt8
    public var day: UInt8
    public var hour: UInt8
    public var minute: UInt8
    public var second: UInt8
    /// 1 = Monday … 7 = Sunday; 0 = unknown.
    public var dayOfWeek: UInt8
    /// 1/256 s.
    public var fractions256: UInt8
    public var adjustReason: TimeAdjustReason

    public init(year: UInt16, month: UInt8, day: UInt8, hour: UInt8, minute: UInt8, second: UInt8, dayOfWeek: UInt8, fractions256: UInt8, adjustReason: TimeAdjustReason) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.dayOfWeek = dayOfWeek
        self.fractions256 = fractions256
        self.adjustReason = adjustReason
    }

    /// `date` as local time in `zone`.
    public init(_ date: Date, in zone: TimeZone, reason: TimeAdjustReason = .externalReference) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday, .nanosecond], from: date)
        // Calendar weekdays are 1 = Sunday … 7 = Saturday; the specification's 1 = Monday … 7 = Sunday.
        let weekday = parts.weekday.map { ($0 + 5) % 7 + 1 } ?? 0
        let fraction = min(255, max(0, (parts.nanosecond ?? 0) / 3_906_250))
        self.init(year: UInt16(clamping: parts.year ?? 0), month: UInt8(clamping: parts.month ?? 0), day: UInt8(clamping: parts.day ?? 0),
                  hour: UInt8(clamping: parts.hour ?? 0), minute: UInt8(clamping: parts.minute ?? 0), second: UInt8(clamping: parts.second ?? 0),
                  dayOfWeek: UInt8(clamping: weekday), fractions256: UInt8(clamping: fraction), adjustReason: reason)
    }

    public var value: [UInt8] {
        [UInt8(truncatingIfNeeded: year), UInt8(truncatingIfNeeded: year >> 8), month, day, hour, minute, second, dayOfWeek, fractions256, adjustReason.rawValue]
    }

    /// Parses ten bytes (longer values are refused), checking each field's range.
    public init(value bytes: [UInt8]) throws(StandardValueError) {
        func malformed(_ reason: String) -> StandardValueError { StandardValueError(.currentTime, reason) }
        guard bytes.count == 10 else { throw malformed("\(bytes.count) bytes, expected 10") }
        let year = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        guard year == 0 || (1582...9999).contains(year) else { throw malformed("year \(year) is out of range") }
        guard bytes[2] <= 12 else { throw malformed("month \(bytes[2]) is out of range") }
        guard bytes[3] <= 31 else { throw malformed("day \(bytes[3]) is out of range") }
        guard bytes[4] <= 23, bytes[5] <= 59, bytes[6] <= 59 else { throw malformed("time \(bytes[4]):\(bytes[5]):\(bytes[6]) is out of range") }
        guard bytes[7] <= 7 else { throw malformed("day of week \(bytes[7]) is out of range") }
        self.init(year: year, month: bytes[2], day: bytes[3], hour: bytes[4], minute: bytes[5], second: bytes[6], dayOfWeek: bytes[7],
                  fractions256: bytes[8], adjustReason: TimeAdjustReason(rawValue: bytes[9]))
    }
}

/// A Local Time Information value: the zone's standard offset in 15-minute steps and its
/// daylight-saving offset, two bytes.
public struct LocalTimeInformationValue: Sendable, Hashable {
    /// −48 … +56 quarter hours; −128 = unknown.
    public var timeZone: Int8
    /// 0 standard, 2 half an hour, 4 one hour, 8 two hours; 255 = unknown.
    public var dstOffset: UInt8

    public static let unknownTimeZone: Int8 = -128
    public static let unknownDSTOffset: UInt8 = 255

    public init(timeZone: Int8, dstOffset: UInt8) {
        self.timeZone = timeZone
        self.dstOffset = dstOffset
    }

    /// `zone` at `date`. An offset the specification cannot express is sent as unknown.
    public init(_ zone: TimeZone, at date: Date) {
        let daylight = Int(zone.daylightSavingTimeOffset(for: date))
        let standard = zone.secondsFromGMT(for: date) - daylight
        let quarters = standard / 900
        timeZone = standard % 900 == 0 && (-48...56).contains(quarters) ? Int8(quarters) : Self.unknownTimeZone
        dstOffset = switch daylight {
        case 0: 0
        case 1800: 2
        case 3600: 4
        case 7200: 8
        default: Self.unknownDSTOffset
        }
    }

    public var value: [UInt8] { [UInt8(bitPattern: timeZone), dstOffset] }

    public init(value bytes: [UInt8]) throws(StandardValueError) {
        guard bytes.count == 2 else { throw StandardValueError(.localTimeInformation, "\(bytes.count) bytes, expected 2") }
        let zone = Int8(bitPattern: bytes[0])
        guard zone == Self.unknownTimeZone || (-48...56).contains(zone) else {
            throw StandardValueError(.localTimeInformation, "time zone \(zone) quarter hours is out of range")
        }
        guard [0, 2, 4, 8, Self.unknownDSTOffset].contains(bytes[1]) else {
            throw StandardValueError(.localTimeInformation, "DST offset \(bytes[1]) is not one the specification defines")
        }
        self.init(timeZone: zone, dstOffset: bytes[1])
    }

    /// The total offset from UTC in seconds, when both parts are known.
    public var secondsFromGMT: Int? {
        guard timeZone != Self.unknownTimeZone, dstOffset != Self.unknownDSTOffset else { return nil }
        return Int(timeZone) * 900 + Int(dstOffset) * 900
    }
}
