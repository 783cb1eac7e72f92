import Testing
import TSGATT
import TSModels
@testable import TSProtocol

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

@Suite struct FrameTests {
    @Test func crcCheckValueMatchesTheSpecification() throws {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        // Lengths around the 8-byte stride agree with the bitwise definition.
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            #expect(CRC32.checksum(bytes) == crc ^ 0xFFFF_FFFF, "length \(length)")
        }
    }

    @Test func specificationExampleFrame() throws {
        let frame = try Message.deviceInfoRequest.frame(sequence: 1)
        #expect(try frame.encoded() == hex("A5 01 00 01 02 00 00 00 0E DC 91 B6"))
    }

    @Test func wholeFrameDecodeNamesEachDefect() throws {
        let good = try Message.batteryRequest.frame(sequence: 9).encoded()
        #expect(try Frame.decode(good).command == .battery)
        func code(_ bytes: [UInt8]) -> ProtocolError.Code? {
            do { _ = try Frame.decode(bytes); return nil } catch { return error.code }
        }
        var badCRC = good; badCRC[badCRC.count - 1] ^= 0x01
        #expect(code(badCRC) == .crcMismatch)
        #expect(code(Array(good.dropLast())) == .truncatedFrame)
        #expect(code(good + [0]) == .lengthMismatch)
        var badMarker = good; badMarker[0] = 0x5A
        #expect(code(badMarker) == .badStartMarker)
        var version2 = good; version2[1] = 2
        #expect(code(version2) == .unsupportedVersion)
        #expect(code([]) == .badStartMarker)
        #expect(code([0xA5, 1, 0]) == .truncatedFrame)
        #expect(code([0xA5, 1, 0, 0, 1, 0, 0x01, 0x08]) == .payloadTooLarge)
    }

    @Test func mtuOutsideTheATTRangeIsRejected() throws {
        #expect(throws: ProtocolError.self) { try ATTMTU(22) }
        #expect(throws: ProtocolError.self) { try ATTMTU(518) }
        #expect(try ATTMTU(23).chunkSize == 20)
        #expect(try ATTMTU(517).chunkSize == 514)
    }

    @Test func messageDecodeRejectsUnknownCommandsAndWrongDirections() throws {
        func code(_ frame: Frame) -> ProtocolError.Code? {
            do { _ = try Message(frame: frame); return nil } catch { return error.code }
        }
        #expect(code(Frame(flags: [], sequence: 0, command: CommandID(rawValue: 0x99))) == .unknownCommand)
        #expect(code(Frame(flags: .response, sequence: 0, command: .sleepPage, payload: [])) == .unexpectedDirection)
        #expect(code(Frame(flags: .event, sequence: 0, command: .battery)) == .unexpectedDirection)
        #expect(code(Frame(flags: [.event, .response], sequence: 0, command: .alarmsChanged)) == .unexpectedDirection)
        #expect(code(Frame(flags: [], sequence: 0, command: .liveStage, payload: [0, 1, 0, 0, 0, 0])) == .unexpectedDirection)
        // Reserved flag bits are ignored on receipt.
        #expect(code(Frame(flags: FrameFlags(rawValue: 0x80), sequence: 0, command: .battery)) == nil)
    }

    @Test func encoderRefusesValuesTheWireCannotCarry() throws {
        func code(_ message: Message) -> ProtocolError.Code? {
            do { _ = try message.frame(sequence: 0); return nil } catch { return error.code }
        }
        let longLabel = Alarm(slot: 1, label: String(repeating: "x", count: 40), hour: 7, minute: 0)
        #expect(code(.alarmsSetRequest(AlarmTable(alarms: [longLabel]))) == .labelTooLong)
        #expect(code(.alarmsSetRequest(AlarmTable(alarms: [Alarm(slot: 1, hour: 24, minute: 0)]))) == .hourOutOfRange)
        #expect(code(.alarmsSetRequest(AlarmTable(alarms: [Alarm(slot: 1, hour: 7, minute: 0), Alarm(slot: 1, hour: 8, minute: 0)]))) == .duplicateSlot)
        let everyFiveMinutes = MonitorSchedule(enabled: true, startMinute: 0, endMinute: 1440, intervalMinutes: 7)
        #expect(code(.monitorSetRequest(MonitorConfig(type: .heartRate, schedule: everyFiveMinutes))) == .intervalNotMultipleOf5)
        let inverted = MonitorSchedule(enabled: true, startMinute: 600, endMinute: 600, intervalMinutes: 10)
        #expect(code(.monitorSetRequest(MonitorConfig(type: .spo2, schedule: inverted))) == .windowEndNotAfterStart)
        #expect(code(.sleepPage(SleepPage(transferId: 1, page: 0, last: true, records: []))) == .emptyPage)
        #expect(code(.sleepPage(SleepPage(transferId: 1, page: 0, last: true, records: [SleepItem(stage: .deep, start: 1, duration: 70_000)]))) == .valueOutOfRange)
    }

    @Test func alarmTimeSetterClampsLikeTheSDK() throws {
        var alarm = Alarm(slot: 0, hour: 7, minute: 30)
        alarm.setTime(hour: 25, minute: 75)
        #expect((alarm.hour, alarm.minute) == (23, 59))
        alarm.setTime(hour: -5, minute: -10)
        #expect((alarm.hour, alarm.minute) == (0, 0))
        alarm.setTime(hour: 14, minute: 30)
        #expect((alarm.hour, alarm.minute) == (14, 30))
    }

    @Test func repeatCompositesMatchTheWireMasks() throws {
        #expect(AlarmRepeat.workdays.rawValue == 0x1F)
        #expect(AlarmRepeat.weekend.rawValue == 0x60)
        #expect(AlarmRepeat.everyday.rawValue == 0x7F)
        #expect(AlarmRepeat.once.rawValue == 0)
    }

    @Test func tableValidationNamesTheOffendingAlarmAndLimit() throws {
        let limits = AlarmLimits(maxAlarms: 2, labelMaxBytes: 32, remarkMaxBytes: 6)
        let table = [Alarm(slot: 0, hour: 7, minute: 0), Alarm(slot: 1, hour: 8, minute: 0, remark: "吃药吃药"), Alarm(slot: 2, hour: 9, minute: 0)]
        let problems = table.problems(limits: limits)
        #expect(problems.first == .tooManyAlarms(count: 3, limit: 2))
        #expect(problems.contains(.remarkTooLong(slot: 1, bytes: 12, limit: 6)))
        #expect(problems.map(\.description).contains("alarm in slot 1: remark is 12 bytes of UTF-8, limit 6"))
    }
}
