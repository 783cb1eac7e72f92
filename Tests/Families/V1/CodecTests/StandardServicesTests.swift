import Foundation
import Testing
import TSGATT
import TSModels
@testable import TSProtocol

@Suite struct HeartRateMeasurementTests {
    /// The bytes of a value with `flags`, heart rate 0x48 (or 0x0148 in the wide format),
    /// energy 0x0321 kJ and RR intervals 0x0400, 0x03F0 where the flags announce them.
    static func value(flags: UInt8) -> [UInt8] {
        var bytes = [flags]
        bytes += flags & 0x01 != 0 ? [0x48, 0x01] : [0x48]
        if flags & 0x08 != 0 { bytes += [0x21, 0x03] }
        if flags & 0x10 != 0 { bytes += [0x00, 0x04, 0xF0, 0x03] }
        return bytes
    }

    @Test func everyFlagCombinationParsesEachField() throws {
        // All 32 combinations of the five defined bits, each also with the reserved bits set.
        for defined in UInt8(0)..<32 {
            for reserved: UInt8 in [0x00, 0xE0] {
                let flags = defined | reserved
                let parsed = try HeartRateMeasurement(value: Self.value(flags: flags))
                let context = Comment(rawValue: "flags 0x\(String(flags, radix: 16))")
                #expect(parsed.bpm == (flags & 0x01 != 0 ? 0x0148 : 0x48), context)
                #expect(parsed.wideFormat == (flags & 0x01 != 0), context)
                let contact: SensorContact = switch flags & 0x06 {
                case 0x06: .detected
                case 0x04: .notDetected
                default: .notSupported  // bit 1 alone means nothing without bit 2
                }
                #expect(parsed.sensorContact == contact, context)
                #expect(parsed.energyExpended == (flags & 0x08 != 0 ? 0x0321 : nil), context)
                #expect(parsed.rrIntervals == (flags & 0x10 != 0 ? [0x0400, 0x03F0] : []), context)
            }
        }
    }

    @Test func rrIntervalsAreIn1024thsOfASecond() throws {
        let parsed = try HeartRateMeasurement(value: [0x10, 60, 0x00, 0x04, 0x00, 0x02])
        #expect(parsed.rrIntervalSeconds == [1.0, 0.5])
    }

    @Test func encodingRoundTripsEveryCombination() throws {
        for defined in UInt8(0)..<32 where defined & 0x06 != 0x02 {  // 0x02 alone encodes as "not supported"
            let bytes = Self.value(flags: defined)
            let parsed = try HeartRateMeasurement(value: bytes)
            #expect(parsed.value == bytes, "flags \(defined)")
        }
        // A rate above 255 needs the wide format even when not asked for.
        #expect(try HeartRateMeasurement(value: HeartRateMeasurement(bpm: 300).value).bpm == 300)
    }

    @Test func everyTruncationAndExtensionIsRefusedWithATypedError() throws {
        for flags in UInt8(0)..<32 {
            let whole = Self.value(flags: flags)
            // With RR intervals, dropping the last of the two leaves a valid value of one.
            let shortest = flags & 0x10 != 0 ? whole.count - 2 : whole.count
            if flags & 0x10 != 0 {
                #expect(try HeartRateMeasurement(value: Array(whole.prefix(shortest))).rrIntervals == [0x0400])
            }
            for length in 0..<shortest {
                #expect(throws: StandardValueError.self, "flags \(flags), \(length) of \(whole.count) bytes") {
                    try HeartRateMeasurement(value: Array(whole.prefix(length)))
                }
            }
            // One byte more than the flags announce: a trailing byte, or half an RR interval.
            #expect(throws: StandardValueError.self, "flags \(flags) + 1 byte") {
                try HeartRateMeasurement(value: whole + [0x7F])
            }
        }
    }

    @Test func malformedValuesNameTheDefect() {
        func reason(_ bytes: [UInt8]) -> String? {
            do { _ = try HeartRateMeasurement(value: bytes); return nil } catch { return error.reason }
        }
        #expect(reason([])?.contains("empty") == true)
        #expect(reason([0x00])?.contains("8-bit heart rate") == true)
        #expect(reason([0x01, 0x48])?.contains("16-bit heart rate") == true)
        #expect(reason([0x08, 0x48, 0x01])?.contains("Energy Expended") == true)
        #expect(reason([0x10, 0x48])?.contains("no interval") == true)
        #expect(reason([0x10, 0x48, 0x00, 0x04, 0x01])?.contains("whole number") == true)
        #expect(reason([0x00, 0x48, 0x00])?.contains("after the fields") == true)
        do {
            _ = try HeartRateMeasurement(value: [])
        } catch {
            #expect(error.category == .protocolError)
            #expect(error.characteristic == .heartRateMeasurement)
        }
    }

    @Test func arbitraryBytesNeverTrap() throws {
        var random = SeededRandom(seed: 15)
        for _ in 0..<5_000 {
            let bytes = (0..<Int(random.next() % 12)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if let parsed = try? HeartRateMeasurement(value: bytes) {
                // Whatever parses re-encodes to a value that parses to the same measurement.
                #expect(try HeartRateMeasurement(value: parsed.value) == parsed)
            }
        }
    }
}

@Suite struct StandardValueTests {
    @Test func batteryLevelIsOneByteUpTo100() throws {
        #expect(try BatteryLevelValue.decode([0]) == 0)
        #expect(try BatteryLevelValue.decode([100]) == 100)
        #expect(throws: StandardValueError.self) { try BatteryLevelValue.decode([101]) }
        #expect(throws: StandardValueError.self) { try BatteryLevelValue.decode([]) }
        #expect(throws: StandardValueError.self) { try BatteryLevelValue.decode([50, 0]) }
    }

    @Test func deviceInformationStringsDropNULPaddingAndRefuseBadUTF8() throws {
        #expect(try DeviceInformationString.decode(Array("InfiniTime".utf8) + [0, 0], .modelNumber) == "InfiniTime")
        #expect(try DeviceInformationString.decode(Array("Zürich".utf8), .manufacturerName) == "Zürich")
        #expect(try DeviceInformationString.decode([], .serialNumber) == "")
        #expect(throws: StandardValueError.self) { try DeviceInformationString.decode([0xC3, 0x28], .firmwareRevision) }
    }

    @Test func currentTimeEncodesLocalTimeWithMondayAsDayOne() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2025-03-30 00:59:59.5 UTC is 01:59:59.5 CET, a Sunday (the night clocks go forward).
        let date = Date(timeIntervalSince1970: 1_743_296_399.5)
        let value = CurrentTimeValue(date, in: zone, reason: .externalReference)
        #expect(value.value == [0xE9, 0x07, 3, 30, 1, 59, 59, 7, 128, 0x02])
        #expect(try CurrentTimeValue(value: value.value) == value)
        // One hour later, summer time: 03:59:59 CEST.
        let summer = CurrentTimeValue(date.addingTimeInterval(3600), in: zone)
        #expect(Array(summer.value[4...6]) == [3, 59, 59])
        let monday = CurrentTimeValue(date.addingTimeInterval(86_400), in: zone)
        #expect(monday.dayOfWeek == 1)
    }

    @Test func currentTimeRefusesBadLengthsAndRanges() {
        let good: [UInt8] = [0xE9, 0x07, 3, 30, 1, 59, 59, 7, 0, 0]
        for length in [0, 9, 11] {
            #expect(throws: StandardValueError.self) { try CurrentTimeValue(value: Array((good + [0]).prefix(length))) }
        }
        var badHour = good
        badHour[4] = 24
        #expect(throws: StandardValueError.self) { try CurrentTimeValue(value: badHour) }
        var badWeekday = good
        badWeekday[7] = 8
        #expect(throws: StandardValueError.self) { try CurrentTimeValue(value: badWeekday) }
    }

    @Test func localTimeInformationSplitsStandardAndDaylightOffsets() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let winter = Date(timeIntervalSince1970: 1_736_000_000)  // January 2025
        let summer = Date(timeIntervalSince1970: 1_751_000_000)  // June 2025
        #expect(LocalTimeInformationValue(berlin, at: winter).value == [4, 0])
        #expect(LocalTimeInformationValue(berlin, at: summer).value == [4, 4])
        #expect(LocalTimeInformationValue(berlin, at: summer).secondsFromGMT == 7200)
        let kolkata = try #require(TimeZone(identifier: "Asia/Kolkata"))
        #expect(LocalTimeInformationValue(kolkata, at: winter).value == [22, 0])
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(LocalTimeInformationValue(newYork, at: winter).value == [UInt8(bitPattern: -20), 0])
        // Lord Howe Island keeps half an hour of daylight saving (in January).
        let lordHowe = try #require(TimeZone(identifier: "Australia/Lord_Howe"))
        #expect(LocalTimeInformationValue(lordHowe, at: winter).value == [42, 2])
        // Offsets not on a quarter hour are sent as unknown.
        let odd = try #require(TimeZone(secondsFromGMT: 3600 + 60))
        #expect(LocalTimeInformationValue(odd, at: winter).timeZone == LocalTimeInformationValue.unknownTimeZone)
        #expect(throws: StandardValueError.self) { try LocalTimeInformationValue(value: [4]) }
        #expect(throws: StandardValueError.self) { try LocalTimeInformationValue(value: [60, 0]) }
        #expect(throws: StandardValueError.self) { try LocalTimeInformationValue(value: [4, 3]) }
    }

    @Test func serviceAndCharacteristicUUIDsAreTheSIGsIn128BitForm() {
        #expect(WatchService.battery.uuid == "0000180f-0000-1000-8000-00805f9b34fb")
        #expect(WatchService.heartRate.uuid == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(WatchService(uuid: "0000180A-0000-1000-8000-00805F9B34FB") == .deviceInformation)
        #expect(WatchService(uuid: WatchGATT.service) == .protocolV1)
        #expect(WatchService(uuid: "00001800-0000-1000-8000-00805f9b34fb") == nil)
        #expect(StandardCharacteristic.heartRateMeasurement.uuid == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(StandardCharacteristic.localTimeInformation.uuid == "00002a0f-0000-1000-8000-00805f9b34fb")
    }

    @Test func serviceSetEncodesAsASortedArrayOfNames() throws {
        let set = ServiceSet([.heartRate, .battery, .protocolV1])
        let json = String(decoding: try JSONEncoder().encode(set), as: UTF8.self)
        #expect(json == #"["protocol-v1","battery","heart-rate"]"#)
        #expect(try JSONDecoder().decode(ServiceSet.self, from: Data(json.utf8)) == set)
    }
}
