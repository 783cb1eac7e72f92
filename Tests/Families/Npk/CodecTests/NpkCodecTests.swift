import Foundation
import Testing
import TSModels
import TSNpk

@Suite struct NpkFramingTests {
    @Test func crc16ArcHasItsCheckValueAndAnEmptyPayloadCarriesZero() {
        #expect(NpkCRC16.checksum(Array("123456789".utf8)) == 0xBB3D)
        #expect(NpkCRC16.frameField([]) == 0)
        #expect(NpkCRC16.frameField([0x00]) == NpkCRC16.checksum([0x00]))
    }

    @Test func aPayloadOverTheBoundIsNotEncoded() {
        let frame = NpkFrame(command: .alarmsSet, sequence: 1, payload: [UInt8](repeating: 0, count: NpkFrame.maxPayloadLength + 1))
        #expect(errorCode { _ = try frame.encoded() } == "payloadTooLarge")
        #expect(throws: Never.self) { _ = try NpkFrame(command: .alarmsSet, sequence: 1, payload: [UInt8](repeating: 0, count: 0x2000)).encoded() }
    }

    @Test func chunkSizeIsAParameter() throws {
        #expect(NpkChunking.chunkSize(mtu: 23) == 20)
        #expect(NpkChunking.chunkSize(mtu: 247) == 244)
        let frame = try NpkFrame(command: .battery, sequence: 7, payload: [UInt8](repeating: 0x41, count: 50)).encoded()
        // BlueZ's Multiple Handle Value Notifications carry 2 bytes less than MTU - 3.
        let bluez = NpkChunking.chunks(frame, size: NpkChunking.chunkSize(mtu: 23) - 2)
        #expect(bluez.map(\.count) == [18, 18, 18, 6])
        var reassembler = NpkReassembler()
        #expect(bluez.flatMap { reassembler.feed($0) } == [.frame(try NpkFrame(decoding: frame))])
    }

    @Test func aLengthOverTheBoundIsACountedDropAndTheFrameBehindItIsFound() throws {
        let good = try NpkFrame(command: .battery, sequence: 2).encoded()
        var reassembler = NpkReassembler()
        let out = reassembler.feed([0xAB, 0x05, 0x05, 0x00, 0x20, 0x01, 0, 0, 0, 1] + good)
        #expect(out == [.dropped(.lengthOverBound(length: 0x2001)), .frame(try NpkFrame(decoding: good))])
        #expect(reassembler.drops == NpkStreamDropCounts(lengthOverBound: 1))
    }

    @Test func aBadCRCIsATypedDropNamingTheFrame() throws {
        var bytes = try NpkFrame(command: .dataChanged, sequence: 300, payload: [0x08, 0x01]).encoded()
        bytes[7] ^= 0xFF
        var reassembler = NpkReassembler()
        #expect(reassembler.feed(bytes) == [.dropped(.crcMismatch(command: .dataChanged, sequence: 300, length: 2))])
        #expect(reassembler.drops.crcMismatch == 1)
    }

    @Test func everyValidFrameOneByteAtATimeComesOutInOrder() throws {
        let frames = try NpkVectors.valid.map { try NpkFrame(decoding: hex($0.frame)) }
        let stream = try frames.flatMap { try $0.encoded() }
        var reassembler = NpkReassembler()
        var out: [NpkReassembler.Output] = []
        for byte in stream { out += reassembler.feed([byte]) }
        #expect(out == frames.map { .frame($0) })
        #expect(reassembler.drops == NpkStreamDropCounts())
    }
}

@Suite struct NpkRequestMatcherTests {
    @Test func sequenceStartsAt1AndWrapsFrom65535To1() {
        var counter = NpkSequenceCounter()
        #expect(counter.next() == 1 && counter.next() == 2)
        for _ in 3..<65535 { _ = counter.next() }
        #expect(counter.next() == 65535)
        #expect(counter.next() == 1)
        counter.reset()
        #expect(counter.next() == 1)
    }

    @Test func onlyTheSameCmdKeyAndSequenceAnswersTheRequest() throws {
        var matcher = NpkRequestMatcher()
        let request = try matcher.request(.battery)
        #expect(request.sequence == 1)
        let otherSequence = NpkFrame(command: .battery, sequence: 2, payload: [0x08, 0x57])
        let otherKey = NpkFrame(command: .batteryChanged, sequence: 1, payload: [0x08, 0x57])
        let otherGroup = NpkFrame(command: NpkCommand(cmd: 0x02, key: 0x09), sequence: 1)
        #expect(matcher.route(otherSequence) == .notification(otherSequence))
        #expect(matcher.route(otherKey) == .notification(otherKey))
        #expect(matcher.route(otherGroup) == .notification(otherGroup))
        #expect(matcher.pending == request)
        let answer = NpkFrame(command: .battery, flags: .response, sequence: 1, payload: [0x08, 0x57])
        #expect(matcher.route(answer) == .response(answer))
        #expect(matcher.pending == nil)
        // a second copy of the answer is no longer an answer
        #expect(matcher.route(answer) == .notification(answer))
    }

    @Test func oneRequestInFlightRetransmittedWithTheSameSequence() throws {
        var matcher = NpkRequestMatcher()
        let first = try matcher.request(.deviceInfo)
        #expect(errorCode { _ = try matcher.request(.battery) } == "requestInFlight")
        let again = try #require(matcher.retransmission())
        #expect(again.sequence == first.sequence && again.command == first.command && again.flags == .retransmission)
        matcher.abandon()
        #expect(matcher.retransmission() == nil)
        #expect(try matcher.request(.battery).sequence == 2)
        matcher.reset()
        #expect(matcher.pending == nil)
        #expect(try matcher.request(.login).sequence == 1)
    }
}

@Suite struct NpkListTests {
    func element(_ index: UInt32, of total: UInt32, sequence: UInt16 = 9) -> NpkFrame {
        NpkFrame(command: .sleepData, flags: .list, sequence: sequence,
                 payload: NpkListPosition.payload(total: total, index: index, element: [0x08, UInt8(index)]))
    }

    @Test func aListIsCollectedInOrderUnderOneSequence() throws {
        var assembler = NpkListAssembler()
        #expect(!assembler.isComplete)
        for index in 0..<3 { try assembler.add(element(UInt32(index), of: 3)) }
        #expect(assembler.isComplete)
        #expect(try assembler.finish() == [[0x08, 0], [0x08, 1], [0x08, 2]])
    }

    @Test func aMissingElementIsAnErrorNotAGap() throws {
        var assembler = NpkListAssembler()
        try assembler.add(element(0, of: 3))
        #expect(errorCode { try assembler.add(element(2, of: 3)) } == "listIndexOutOfOrder")
        #expect(errorCode { _ = try assembler.finish() } == "listIncomplete")
        #expect(errorCode { try assembler.add(element(1, of: 3, sequence: 10)) } == "listSequenceChanged")
    }
}

@Suite struct NpkMappingTests {
    @Test func timeIsSecondsSince2000AndTheZoneOffsetIsSigned() throws {
        #expect(NpkTime.unix(fromT2000: 0) == 946_684_800)
        #expect(try NpkTime.t2000(fromUnix: 1_763_600_000) == 1_763_600_000 - 946_684_800)
        #expect(errorCode { _ = try NpkTime.t2000(fromUnix: 946_684_800 + Int64(Int32.max) + 1) } == "timeOutOfRange")
        let date = Date(timeIntervalSince1970: 1_763_600_000.9)
        let west = try NpkTime.timeModel(at: date, in: TimeZone(secondsFromGMT: -12_600)!)
        #expect(west.timestamp == 1_763_600_000 - 946_684_800 && west.zoneOffset == -12_600)
        // sint32: -12600 is zig-zag 25199 = 0xEF 0xC4 0x01 after the tag 0x10
        let bytes: [UInt8] = try west.serializedBytes()
        #expect(bytes.suffix(4) == [0x10, 0xEF, 0xC4, 0x01])
    }

    @Test func alarmsTheDialectCannotHoldAreRefusedWithWhatToChange() throws {
        let label64 = String(repeating: "a", count: 64)
        let tooLong = Alarm(slot: 1, label: label64, hour: 7, minute: 0)
        let error = try #require(catching { _ = try NpkAlarms.item(from: tooLong) })
        #expect(error.code == .labelTooLong && error.category == .invalidInput && error.message.contains("63"))
        #expect(try NpkAlarms.item(from: Alarm(slot: 1, label: String(repeating: "ä", count: 31) + "a", hour: 7, minute: 0)).label.utf8.count == 63)
        let snooze = try #require(catching { _ = try NpkAlarms.item(from: Alarm(slot: 1, hour: 7, minute: 0, snoozeAllowed: true)) })
        #expect(snooze.code == .notSupported && snooze.category == .notSupported && snooze.message.contains("snooze"))
        #expect(catching { _ = try NpkAlarms.item(from: Alarm(slot: 1, hour: 7, minute: 0, remark: "x")) }?.category == .notSupported)
        #expect(catching { _ = try NpkAlarms.item(from: Alarm(slot: 1, hour: 7, minute: 0, smartWindow: 10)) }?.category == .notSupported)
        let three = (0..<3).map { Alarm(slot: UInt8($0), hour: 7, minute: 0) }
        #expect(catching { _ = try NpkAlarms.list(from: three, maxAlarms: 2) }?.code == .tooManyAlarms)
        #expect(catching { _ = try NpkAlarms.list(from: [three[0], three[0]], maxAlarms: 5) }?.code == .duplicateAlarmId)
        let item = try NpkAlarms.item(from: Alarm(slot: 4, label: "Work", hour: 6, minute: 45, repeatDays: [.monday, .sunday]))
        #expect(item.id == 4 && item.hour == 6 && item.minute == 45 && item.repeat == 0x41 && item.label == "Work" && item.isEnabled)
    }

    @Test func monitorSetKeepsWhatTheGatewayDoesNotModel() throws {
        var current = TSMetaHeartRateConfig()
        current.monitor.isEnabled = false
        current.exerciseAlarm.isEnabled = true
        current.exerciseAlarm.max = 165
        current.maxThreshold = 190
        let settings = NpkMonitorSettings.heartRate(current)
        var config = try settings.config()
        #expect(config.type == .heartRate && !config.schedule.enabled)
        config.schedule = MonitorSchedule(enabled: true, startMinute: 480, endMinute: 1320, intervalMinutes: 30)
        config.alert = MonitorAlert(enabled: true, upper: 120, lower: 45)
        guard case let .heartRate(updated) = try settings.applying(config) else { Issue.record("not heart rate"); return }
        #expect(updated.monitor.isEnabled && updated.monitor.start == 480 && updated.monitor.end == 1320 && updated.monitor.interval == 30)
        #expect(updated.restingAlarm.isEnabled && updated.restingAlarm.min == 45 && updated.restingAlarm.max == 120)
        #expect(updated.exerciseAlarm == current.exerciseAlarm && updated.maxThreshold == 190)
        #expect(try NpkMonitorSettings.heartRate(updated).config() == config)
        #expect(catching { _ = try NpkMonitorSettings.commands(for: .temperature) }?.category == .notSupported)
        #expect(try NpkMonitorSettings.commands(for: .bloodPressure).set == .bloodPressureConfigSet)
        config.schedule.intervalMinutes = 7
        #expect(catching { _ = try settings.applying(config) }?.category == .invalidInput)
    }

    @Test func deviceInformationGivesLimitsAndMonitorTypesFromTheAbilityBits() throws {
        var info = TSMetaPeripheralInfo()
        info.model = "TS-W2"
        info.version = "1.0.7"
        info.limits.alarm = 8
        info.ability = Data([0b0000_1101, 0x00, 0x01])  // heart rate, SpO2, stress; bit 16 world clock
        let abilities = NpkAbilities(info.ability)
        #expect(abilities.contains(.heartRate) && !abilities.contains(.bloodPressure) && abilities.contains(.worldClock))
        #expect(!abilities.contains(bit: 100))
        let device = NpkDevice.deviceInfo(from: info, services: nil)
        #expect(device.model == "TS-W2" && device.firmware == "1.0.7")
        #expect(device.capabilities.maxAlarms == 8 && device.capabilities.alarms?.labelMaxBytes == 63 && device.capabilities.alarms?.remarkMaxBytes == 0)
        #expect(device.capabilities.monitorTypes == [.heartRate, .spo2, .stress])
    }

    @Test func bindResultsAndSyncAnswers() {
        #expect(NpkBindResult(rawValue: 0).isSuccess && NpkBindResult(rawValue: 4).isSuccess)
        #expect(!NpkBindResult.declinedOnWatch.isSuccess && NpkBindResult.declinedOnWatch.description.contains("declined"))
        #expect(NpkBindResult(rawValue: 42).description.contains("42"))
        var response = TSMetaSyncStartResponse()
        response.result = 1
        #expect(NpkSyncStartResult(response) == .nothingNew)
        response.result = 127
        #expect(NpkSyncStartResult(response) == .failed(result: 127))
        #expect(NpkSyncType.sleep.dataCommand == .sleepData && NpkSyncType.heartRate.dataCommand == .heartRateData)
    }
}

func catching(_ body: () throws -> Void) -> NpkError? {
    do {
        try body()
        return nil
    } catch {
        return error as? NpkError
    }
}

@Suite struct NpkRobustnessTests {
    /// Valid frames with bytes flipped, cut and spliced, in random chunks: the reassembler gives
    /// only frames whose CRC holds and typed drops, every frame it gives is read as a message or
    /// refused with an NpkError, and no sleep item from a damaged frame becomes a record unless
    /// its frame passed the CRC and the mapping's rules.
    @Test func damagedStreamsGiveFramesOrTypedErrorsNeverACrash() throws {
        var random = SeededRandom(seed: 26)
        let frames = NpkVectors.valid.map { hex($0.frame) }
        #expect(!frames.isEmpty)
        var delivered = 0, dropped = 0, refused = 0
        for _ in 0..<400 {
            var stream: [UInt8] = []
            for _ in 0..<random.int(1...4) {
                var frame = frames[random.int(0...frames.count - 1)]
                if random.chance(0.6) {
                    for _ in 0..<random.int(1...3) { frame[random.int(0...frame.count - 1)] ^= UInt8(random.int(1...255)) }
                }
                if random.chance(0.2) { frame = Array(frame.prefix(random.int(1...frame.count))) }
                if random.chance(0.2) { stream += (0..<random.int(1...12)).map { _ in UInt8(random.int(0...255)) } }
                stream += frame
            }
            var reassembler = NpkReassembler()
            var out: [NpkReassembler.Output] = []
            for chunk in NpkChunking.chunks(stream, size: random.int(1...244)) { out += reassembler.feed(chunk) }
            out += reassembler.flush()
            #expect(reassembler.pendingByteCount == 0)
            for output in out {
                switch output {
                case let .frame(frame):
                    delivered += 1
                    #expect(try NpkFrame(decoding: frame.encoded()) == frame)
                    for direction in NpkDirection.allCases {
                        do {
                            let message = try NpkMessage(frame, from: direction)
                            if let day = message.message as? TSMetaSleepDay {
                                let records = NpkSleep.records(from: day)
                                #expect(records.items.allSatisfy { $0.duration > 0 })
                            }
                        } catch is NpkError {
                            refused += 1
                        }
                    }
                case .dropped:
                    dropped += 1
                }
            }
            #expect(reassembler.drops.crcMismatch + reassembler.drops.lengthOverBound + reassembler.drops.truncated
                    == out.filter { if case .dropped = $0 { true } else { false } }.count)
        }
        #expect(delivered > 0 && dropped > 0 && refused > 0)
    }
}
