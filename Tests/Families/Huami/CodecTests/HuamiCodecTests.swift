import Foundation
import Testing
import TSModels
import TSHuami

@Suite struct HuamiCodecTests {
    @Test func modelsByNameWithTheirFlagsAndSampleSizes() {
        #expect(HuamiModel(advertisedName: "mi smart band 4") == .miBand4)
        #expect(HuamiModel(advertisedName: "Xiaomi Band 3") == .miBand3)
        #expect(HuamiModel(advertisedName: "Amazfit GTS 2") == .gts2)
        #expect(HuamiModel(advertisedName: "Amazfit GTS 2 mini") == nil)
        #expect(HuamiModel.bip.authFlags == .bip && HuamiModel.miBand3.authFlags == .miBand3 && HuamiModel.miBand6.authFlags == .crypt)
        #expect(HuamiModel.miBand5.sampleFormat(firmware: nil) == .eightByte)
        #expect(HuamiModel.miBand4.sampleFormat(firmware: "1.0.9.66") == .fourByte)
        #expect(HuamiModel.gts.sampleFormat(firmware: "0.0.9.00") == .fourByte)
        #expect(HuamiModel.gts.sampleFormat(firmware: "0.0.9.06") == .eightByte)
        #expect(HuamiModel.gtr.sampleFormat(firmware: "1.3.5.78") == .fourByte)   // 47 mm, too old
        #expect(HuamiModel.gtr.sampleFormat(firmware: "1.3.5.79") == .eightByte)
        #expect(HuamiModel.gtr.sampleFormat(firmware: "0.1.1.15") == .eightByte)  // 42 mm
        #expect(HuamiModel.gtr.sampleFormat(firmware: "0.1.1.14") == .fourByte)
        #expect(HuamiModel.gtr.sampleFormat(firmware: "unknown") == .fourByte)
    }

    @Test func theActivityFetchAsksFromAWholeMinuteInTheBandsZone() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2025-11-23 19:00:42 UTC is 20:00:42 in Berlin (CET, +4 quarter-hours)
        let request = HuamiFetchRequest.activity(since: 1_763_924_442, zone: berlin)
        #expect(request.bytes == [0x01, 0x01, 0xE9, 0x07, 11, 23, 20, 0, 0, 4])
        guard case let .start(_, since) = try HuamiFetchRequest(bytes: request.bytes) else { Issue.record("not a start"); return }
        #expect(since.unixSeconds == 1_763_924_400)
    }

    @Test func crc32CheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func aWrongKeyIsTheBandRefusingTheAuthKey() throws {
        let answer = try HuamiAuthAnswer(bytes: [0x10, 0x83, 0x04])
        #expect(answer == .refused(opcode: 3, status: 4))
        let error = try #require(answer.error)
        #expect(error.code == .authKeyRefused)
        #expect(error.message == "the band refused the auth key")
        #expect(error.category == .notPaired)
        #expect(HuamiAuthAnswer.accepted.error == nil)
        #expect(HuamiAuthAnswer.refused(opcode: 2, status: 4).error?.code == .authFailed)
    }

    @Test func theWholeAuthExchangeRunsBothWays() throws {
        let key = try HuamiAuthKey(hex: "0x0123456789abcdef0123456789abcdef")
        for flags in [HuamiAuthFlags.bip, .miBand3, .crypt] {
            // central → band: the random-number request; band → central: the challenge
            #expect(try HuamiAuthRequest(bytes: HuamiAuthRequest.requestRandom(flags).bytes) == .requestRandom(flags))
            let challenge = (0..<16).map { UInt8($0 * 11 & 0xFF) }
            let notified = HuamiAuthAnswer.random(challenge).bytes(cryptFlags: flags.cryptFlags)
            guard case let .random(received) = try HuamiAuthAnswer(bytes: notified) else { Issue.record("no challenge"); return }
            // central: the encrypted answer; band: checks it
            let request = try key.answer(challenge: received, flags: flags)
            guard case let .sendEncrypted(readFlags, encrypted) = try HuamiAuthRequest(bytes: request.bytes) else { Issue.record("no answer"); return }
            #expect(readFlags == flags)
            #expect(key.accepts(encrypted: encrypted, challenge: challenge))
            let wrong = try HuamiAuthKey(bytes: [UInt8](repeating: 7, count: 16))
            #expect(!wrong.accepts(encrypted: encrypted, challenge: challenge))
        }
        #expect(key.description == "a 16-byte auth key")
        #expect(throws: HuamiError.self) { try key.encrypt(challenge: [1, 2, 3]) }
    }

    @Test func timeRoundTripsThroughBothFormsInEveryZoneOffset() throws {
        var random = SeededRandom(seed: 33)
        let zones = ["Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Kiritimati", "America/St_Johns", "UTC"]
        for _ in 0..<2000 {
            let zone = try #require(TimeZone(identifier: zones[random.int(0...(zones.count - 1))]))
            let unix = Int64(random.int(946_684_800...4_102_444_799))
            let time = HuamiTime(unixSeconds: unix, zone: zone)
            #expect(time.unixSeconds == unix)
            #expect(try HuamiTime(currentTimeBytes: time.currentTimeBytes) == time)
            #expect(try HuamiTime(shortBytes: time.shortBytes).unixSeconds == unix)
        }
    }

    @Test func projectAlarmsBecomeBandAlarmsAndBack() throws {
        let alarm = Alarm(slot: 2, label: "", hour: 6, minute: 45, isEnabled: true, snoozeAllowed: false, repeatDays: .workdays)
        let band = try HuamiAlarm(alarm)
        #expect(HuamiConfigRequest.setAlarm(band).bytes == [0x02, 0xC2, 6, 45, 0x1F])
        #expect(band.alarm == alarm)
        #expect(try HuamiConfigRequest(bytes: [0x02, 0xC2, 6, 45, 0x1F]) == .setAlarm(band))
        #expect(throws: HuamiError(.slotOutOfRange, "alarm slot 10: a band has slots 0 … 9")) { try HuamiAlarm(Alarm(slot: 10, hour: 7, minute: 0)) }
        #expect((try? HuamiAlarm(Alarm(slot: 1, hour: 24, minute: 0))) == nil)
        #expect([Alarm(slot: 0, label: "Work", hour: 7, minute: 0)].problems(limits: HuamiAlarm.limits).first == .labelTooLong(slot: 0, bytes: 4, limit: 0))
        // Every slot, time and day mask reads back as written.
        for slot in UInt8(0)..<10 {
            for days in [UInt8(0), 1, 0x1F, 0x60, 0x7F] {
                for (enabled, snooze) in [(true, true), (true, false), (false, true)] {
                    let a = HuamiAlarm(slot: slot, isEnabled: enabled, snoozeAllowed: snooze, hour: slot * 2, minute: 59, repeatDays: AlarmRepeat(rawValue: days))
                    #expect(try HuamiConfigRequest(bytes: HuamiConfigRequest.setAlarm(a).bytes) == .setAlarm(a))
                }
            }
        }
    }

    @Test func monitorConfigsBecomeHeartRateCommands() throws {
        #expect(try HuamiHeartRateCommand(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true, intervalMinutes: 10))) == .interval(minutes: 10))
        #expect(try HuamiHeartRateCommand(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: false))) == .interval(minutes: 0))
        #expect(try HuamiHeartRateCommand(MonitorConfig(type: .sleep, schedule: MonitorSchedule(enabled: true))) == .sleepMonitoring(true))
        func code(_ config: MonitorConfig) -> HuamiError.Code? {
            do { _ = try HuamiHeartRateCommand(config); return nil } catch { return error.code }
        }
        #expect(code(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true, startMinute: 480, endMinute: 1320))) == .windowNotSupported)
        #expect(code(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true), alert: MonitorAlert(enabled: true, upper: 120))) == .windowNotSupported)
        #expect(code(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true, intervalMinutes: 300))) == .intervalOutOfRange)
        #expect(code(MonitorConfig(type: .spo2, schedule: MonitorSchedule(enabled: true))) == .windowNotSupported)
        #expect(HuamiError(.windowNotSupported, "").category == .invalidInput)
    }

    @Test func batteryStates() throws {
        #expect(try HuamiBattery(bytes: HuamiBattery(level: 87, state: 1).bytes).status == BatteryStatus(level: 87, state: .charging))
        #expect(try HuamiBattery(bytes: [0, 5, 0]).status == BatteryStatus(level: 5, state: .discharging))
        #expect(try HuamiBattery(bytes: [0, 5, 9]).status.state == .unknown)
    }

    /// The band's side and the central's side of a transfer agree, whatever the packet size and
    /// wherever the data is split into packets.
    @Test func aTransferSplitAtEveryByteReassembles() throws {
        var random = SeededRandom(seed: 5)
        let samples: [HuamiSample] = (0..<40).map { (i: Int) -> HuamiSample in
            let n = UInt8(i)
            return HuamiSample(kind: 120, intensity: n, steps: n % 3, heartRate: 50 + n, unknown: 0, sleep: 9, deep: n * 3, rem: n * 2)
        }
        let data = HuamiSample.encode(samples, format: .eightByte)
        for perPacket in 1...data.count {
            var assembler = try HuamiFetchAssembler(count: UInt32(data.count), format: .eightByte)
            for packet in HuamiDataPacket.packets(data, perPacket: perPacket) { try assembler.feed(packet.bytes) }
            #expect(try assembler.finish(crc32: CRC32.checksum(data), verifyCRC: true) == data)
        }
        for cut in 1..<data.count {
            var assembler = try HuamiFetchAssembler(count: UInt32(data.count), format: .eightByte)
            try assembler.feed([0] + data[..<cut])
            try assembler.feed([1] + data[cut...])
            #expect(try HuamiSample.decode(assembler.finish(), format: .eightByte) == samples)
        }
        // Out of order within the window: shuffle each group of up to 8 packets.
        for _ in 0..<200 {
            var packets = HuamiDataPacket.packets(data, perPacket: random.int(1...30)).map(\.bytes)
            var at = 0
            while at < packets.count {
                let end = min(at + random.int(1...8), packets.count)
                packets[at..<end].shuffle(using: &random)
                at = end
            }
            var assembler = try HuamiFetchAssembler(count: UInt32(data.count), format: .eightByte)
            for packet in packets { try assembler.feed(packet) }
            #expect(try assembler.finish() == data)
        }
    }

    @Test func anAlarmTableSplitIntoChunksOfEverySizeReassembles() throws {
        let alarms: [HuamiAlarm] = (UInt8(0)..<10).map { (s: UInt8) -> HuamiAlarm in
            let enabled = s % 3 != 0
            let snooze = s % 2 == 0 || !enabled
            let days = AlarmRepeat(rawValue: (s * 9) & 0x7F)
            return HuamiAlarm(slot: s, isEnabled: enabled, snoozeAllowed: snooze, hour: s, minute: s * 5, repeatDays: days)
        }
        for size in 1...45 {
            var assembler = HuamiConfigChunkAssembler()
            var whole: (type: UInt8, payload: [UInt8])?
            for chunk in HuamiAlarmTable.chunks(alarms, chunkPayload: size) {
                guard case let .chunk(read) = try HuamiConfigAnswer(bytes: chunk.bytes) else { Issue.record("not a chunk"); return }
                #expect(whole == nil)
                whole = try assembler.feed(read)
            }
            let table = try #require(whole)
            #expect(table.type == HuamiAlarmTable.chunkType)
            #expect(try HuamiAlarmTable.alarms(payload: table.payload) == alarms)
        }
    }

    @Test func aNightSplitAcrossFetchesAtEveryMinuteReadsTheSame() throws {
        let start: Int64 = 1_763_931_600
        var samples: [HuamiSample] = []
        for (kind, minutes) in [(1, 5), (9, 30), (11, 20), (0, 10), (1, 7), (12, 20), (9, 25), (11, 15), (1, 3)] {
            samples += (0..<minutes).map { _ in HuamiSample(kind: UInt8(kind), heartRate: 60) }
        }
        var whole = HuamiSleepReader()
        let expected = whole.read(HuamiActivity(start: start, format: .fourByte, samples: samples))
        let total: Int64 = expected.map(\.duration).reduce(0, +)
        let minutes: Int64 = 30 + 20 + 10 + 7 + 20 + 25 + 15
        #expect(total == minutes * 60)
        for cut in 0...samples.count {
            var reader = HuamiSleepReader()
            let first = reader.read(HuamiActivity(start: start, format: .fourByte, samples: Array(samples[..<cut])))
            let second = reader.read(HuamiActivity(start: start + Int64(cut) * 60, format: .fourByte, samples: Array(samples[cut...])))
            #expect(joined(first + second) == expected, "cut at minute \(cut)")
            #expect(reader.state == whole.state)
        }
    }

    /// What a simulated band writes for a stage reads back as that stage (REM as light in the 4-byte form).
    @Test func theSimulatedBandsMinutesReadBackAsTheirStages() {
        for format in HuamiSampleFormat.allCases {
            for stage in SleepStage.allCases {
                var carried: UInt8? = nil
                let read = HuamiSleepReader.minute(HuamiSample.minute(stage, format: format, heartRate: 60), format: format, carriedKind: &carried)
                let expected: HuamiMinute = stage == .awake ? .awake : .asleep(format == .fourByte && stage == .rem ? .light : stage)
                #expect(read == expected, "\(format) \(stage)")
            }
            var carried: UInt8? = nil
            #expect(HuamiSleepReader.minute(HuamiSample.notWorn(format: format), format: format, carriedKind: &carried) == .noData)
            #expect(HuamiSample.minute(.light, format: format).bpm == nil)
        }
    }

    func joined(_ items: [SleepItem]) -> [SleepItem] {
        var out: [SleepItem] = []
        for item in items {
            if let last = out.last, last.stage == item.stage, last.end == item.start { out[out.count - 1].duration += item.duration } else { out.append(item) }
        }
        return out
    }

    /// Random and mutated input never crashes a decoder: each is a value or a HuamiError.
    @Test func randomBytesGetAnAnswerOrAnError() throws {
        var random = SeededRandom(seed: 34)
        var decoded = 0
        for _ in 0..<20_000 {
            var bytes = (0..<random.int(0...24)).map { _ in UInt8(random.int(0...255)) }
            if !bytes.isEmpty, random.chance(0.5) { bytes[0] = [0x10, 0x01, 0x02, 0x03, 0x0D, 0x14, 0x15, 0x80, 0x82, 0x83, 0xFF][random.int(0...10)] }
            if bytes.count > 1, random.chance(0.5) { bytes[1] = UInt8(random.int(0...3)) }
            for decode in [
                { _ = try HuamiAuthAnswer(bytes: bytes) }, { _ = try HuamiAuthRequest(bytes: bytes) }, { _ = try HuamiConfigAnswer(bytes: bytes) },
                { _ = try HuamiConfigRequest(bytes: bytes) }, { _ = try HuamiHeartRateCommand(bytes: bytes) }, { _ = try HuamiBattery(bytes: bytes) },
                { _ = try HuamiFetchAnswer(bytes: bytes) }, { _ = try HuamiFetchRequest(bytes: bytes) }, { _ = try HuamiTime(currentTimeBytes: bytes) },
                { _ = try HuamiTime(shortBytes: bytes) },
            ] as [() throws -> Void] {
                do { try decode(); decoded += 1 } catch let error as HuamiError { _ = error.code } catch { Issue.record("not a HuamiError: \(error)") }
            }
        }
        #expect(decoded > 1000)
    }
}
