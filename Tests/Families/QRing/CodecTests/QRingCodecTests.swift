import Foundation
import Testing
import TSModels
import TSQRing

@Suite struct QRingCodecTests {
    @Test func crc16ModbusCheckValue() {
        #expect(CRC16Modbus.checksum(Array("123456789".utf8)) == 0x4B37)
        #expect(CRC16Modbus.checksum([]) == 0xFFFF)
    }

    @Test func theRealSleepRequestsAreBuiltByteForByte() {
        #expect(BigDataFrame.sleepRequest.bytes == [0xBC, 0x27, 0x01, 0x00, 0xFF, 0x00, 0xFF])
        #expect(BigDataFrame.sleepRequestTwoByte.bytes == [0xBC, 0x27, 0x02, 0x00, 0x81, 0x80, 0xFF, 0x01])
    }

    @Test func requestsReadBackAsPackets() throws {
        for request in [QRingRequest.battery, QRingRequest.realTimeStart, QRingRequest.switchWrite(.hrv, enabled: true), QRingRequest.steps(daysAgo: 3)] {
            let read = try QRingPacket(bytes: request.bytes)
            #expect(read == request)
        }
    }

    @Test func ringDatesCountDaysAcrossMonthsYearsAndLeapDays() {
        #expect(RingDate(year: 1970, month: 1, day: 1).daysSince1970 == 0)
        #expect(RingDate(year: 2025, month: 11, day: 24).daysSince1970 == 20416)
        #expect(RingDate(year: 2024, month: 3, day: 1).adding(days: -1) == RingDate(year: 2024, month: 2, day: 29))
        #expect(RingDate(year: 2025, month: 1, day: 1).adding(days: -1) == RingDate(year: 2024, month: 12, day: 31))
        #expect(RingDate(daysSince1970: -1) == RingDate(year: 1969, month: 12, day: 31))
        #expect(RingDate(iso: "2025-02-29") == nil)
        #expect(RingDate(iso: "2024-02-29")?.exists == true)
        #expect(RingDate(year: 2025, month: 13, day: 1).exists == false)
    }

    @Test func setTimeWritesTheLocalWallClock() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2025-11-24 06:05:09 UTC is 07:05:09 in Berlin (CET)
        let packet = try QRingRequest.setTime(at: Date(timeIntervalSince1970: 1_763_964_309), in: berlin)
        #expect(Array(packet.bytes.prefix(8)) == [0x01, 0x25, 0x11, 0x24, 0x07, 0x05, 0x09, 0x01])
        let summer = try QRingRequest.setTime(at: Date(timeIntervalSince1970: 1_751_328_000), in: berlin)  // 2025-07-01 00:00 UTC
        #expect(Array(summer.bytes.prefix(7)) == [0x01, 0x25, 0x07, 0x01, 0x02, 0x00, 0x00])
        #expect(RingClock.today(at: Date(timeIntervalSince1970: 1_763_938_800), in: berlin) == RingDate(year: 2025, month: 11, day: 24))
    }

    @Test func valuesTheRingCannotTakeAreInvalidInput() {
        func code(_ make: () throws -> QRingPacket) -> QRingError? {
            do { _ = try make(); return nil } catch { return error as? QRingError }
        }
        let year2100 = code { try QRingRequest.setTime(RingDateTime(date: RingDate(year: 2100, month: 1, day: 1), secondOfDay: 0)) }
        #expect(year2100?.code == .yearOutOfRange)
        #expect(year2100?.category == .invalidInput)
        #expect(code { try QRingRequest.heartRateLogSettingsWrite(enabled: true, intervalMinutes: 7) }?.code == .intervalOutOfRange)
        #expect(code { try QRingRequest.heartRateLogSettingsWrite(enabled: true, intervalMinutes: 65) }?.code == .intervalOutOfRange)
        let window = MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true, startMinute: 480, endMinute: 1320, intervalMinutes: 10))
        #expect(code { try QRingRequest.heartRateLogSettingsWrite(window) }?.code == .windowNotSupported)
        let alert = MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true), alert: MonitorAlert(enabled: true, upper: 120, lower: 40))
        #expect(code { try QRingRequest.heartRateLogSettingsWrite(alert) }?.code == .windowNotSupported)
        let spo2 = MonitorConfig(type: .spo2, schedule: MonitorSchedule(enabled: true))
        #expect(code { try QRingRequest.heartRateLogSettingsWrite(spo2) }?.code == .windowNotSupported)
    }

    @Test func badBytesFromTheRingAreProtocolErrors() {
        var bytes = QRingRequest.battery.bytes
        bytes[15] ^= 1
        do {
            _ = try QRingPacket(bytes: bytes)
            Issue.record("a wrong checksum was accepted")
        } catch {
            #expect(error.code == .checksumMismatch)
            #expect(error.category == .protocolError)
        }
    }

    @Test func aPartialBigDataFrameWaitsUntilTheTimeout() {
        var reassembler = BigDataReassembler()
        let frame = BigDataFrame(type: 0x27, payload: [UInt8](repeating: 2, count: 40)).bytes
        #expect(reassembler.feed(frame.prefix(30)).isEmpty)
        #expect(reassembler.hasPartialFrame)
        reassembler.expire()
        #expect(!reassembler.hasPartialFrame)
        #expect(reassembler.incomplete == 1)
        #expect(reassembler.feed(frame) == [BigDataFrame(type: 0x27, payload: [UInt8](repeating: 2, count: 40))])
    }

    @Test func aLengthOverTheBoundIsNotAwaited() {
        var reassembler = BigDataReassembler(maxPayload: 100)
        let frame = BigDataFrame(type: 0x27, payload: [UInt8](repeating: 5, count: 101)).bytes
        #expect(reassembler.feed(frame).isEmpty)
        #expect(reassembler.oversized == 1)
        #expect(!reassembler.hasPartialFrame)
    }

    @Test func switchedMonitorsNameTheirMonitorTypes() {
        #expect(SwitchedMonitor.spo2.monitorType == .spo2)
        #expect(SwitchedMonitor.stress.monitorType == .stress)
        #expect(SwitchedMonitor.hrv.monitorType == nil)
        #expect(QRingCommand.switchedMonitor(command: 0x38) == .hrv)
    }

    /// Random and mutated input never crashes a decoder: each answer is a value or a QRingError.
    @Test func randomBytesGetAnAnswerOrAnError() throws {
        var random = SeededRandom(seed: 27)
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let night: [UInt8] = [1, 0, 10, 0x64, 0x05, 0x90, 0x01, 2, 200, 3, 128, 4, 90]
        var decodedDays = 0
        for round in 0..<3000 {
            var payload = round % 2 == 0 ? night : (0..<random.int(0...40)).map { _ in UInt8(random.int(0...255)) }
            if round % 2 == 0 { payload[random.int(0...(payload.count - 1))] = UInt8(random.int(0...255)) }
            if let days = try? RingSleep.days(payload: payload, today: RingDate(year: 2025, month: 11, day: 24), zone: berlin) {
                decodedDays += days.count
                for day in days { #expect(day.items.allSatisfy { $0.duration > 0 }) }
            }
            var packet = (0..<15).map { _ in UInt8(random.int(0...255)) }
            packet[0] = [0x01, 0x03, 0x15, 0x16, 0x2C, 0x36, 0x38, 0x43, 0x69, 0x6A, 0x73][random.int(0...10)]
            packet.append(QRingPacket.checksum(packet))
            _ = try? QRingAnswer(packet: packet)
            var log = HeartRateLogAssembler(day: RingDate(year: 2025, month: 11, day: 24), zone: berlin)
            _ = try? log.feed(packet)
            var steps = StepsAssembler(zone: berlin)
            _ = try? steps.feed(packet)
        }
        #expect(decodedDays > 0)

        var reassembler = BigDataReassembler(maxPayload: 300)
        var frames = 0
        for _ in 0..<3000 {
            let chunk = (0..<random.int(1...20)).map { _ in random.chance(0.05) ? BigDataFrame.marker : UInt8(random.int(0...255)) }
            frames += reassembler.feed(chunk).count
            if random.chance(0.01) { reassembler.expire() }
        }
        reassembler.expire()
        #expect(!reassembler.hasPartialFrame)
        #expect(reassembler.feed(BigDataFrame.sleepRequest.bytes) == [BigDataFrame.sleepRequest])
    }
}
