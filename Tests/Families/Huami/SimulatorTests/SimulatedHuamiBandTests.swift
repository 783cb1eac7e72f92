import Foundation
import TSTransport
import Testing
import TSHuami
import TSHuamiSimulator
import TSModels

/// The simulated band through the codec, as a central speaks to it: every request built by
/// `TSHuami`, every answer read by it.
@Suite struct SimulatedHuamiBandTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-23 07:30:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_763_883_000)

    static func band(days: Int = 3, model: HuamiModel = .miBand5, alarms: [Alarm] = [], monitors: [MonitorConfig] = [],
                     configure: (inout SimulatedHuamiBand.Configuration) -> Void = { _ in }) -> SimulatedHuamiBand {
        var configuration = SimulatedHuamiBand.Configuration(model: model)
        configure(&configuration)
        let history = HuamiBandHistory(seed: 7, timeZone: berlin, now: now, days: days, format: configuration.sampleFormat)
        return SimulatedHuamiBand(configuration: configuration, history: history, alarms: alarms, monitors: monitors, now: { now })
    }

    @Test func itsKeyAuthenticatesAndAnotherIsRefusedAsABandRefusesIt() async throws {
        let band = Self.band()
        let central = await Central(band)
        #expect(try await central.auth(key: .simulatorDefault) == .accepted)
        #expect(await band.isAuthenticated)

        let wrong = try HuamiAuthKey(hex: "ffeeddccbbaa99887766554433221100")
        let refusal = try await central.auth(key: wrong)
        #expect(refusal == .refused(opcode: 3, status: 4))
        #expect(refusal.error?.code == .authKeyRefused)
        #expect(!(await band.isAuthenticated))
        // The crypt flag of the request comes back in the answers' high nibble (the Mi Band 4 on).
        #expect(await central.rawAnswers(.auth).allSatisfy { $0[1] == 0x82 || $0[1] == 0x83 })
        let statistics = await band.statistics
        #expect(statistics.authsAccepted == 1 && statistics.authsRefused == 1)
    }

    @Test func miband2sAuthWithoutTheCryptFlagGetsPlainOpcodes() async throws {
        let band = Self.band()
        let central = await Central(band)
        #expect(try await central.auth(key: .simulatorDefault, flags: .miBand3) == .accepted)
        #expect(await central.rawAnswers(.auth).map { Array($0.prefix(3)) } == [[0x10, 0x02, 0x01], [0x10, 0x03, 0x01]])
        // A new key is refused unless the band is in pairing mode (miband2's `Key(reset=True)`).
        await central.write(HuamiAuthRequest.sendKey(authFlags: 0, key: try HuamiAuthKey(hex: "0x" + String(repeating: "ab", count: 16))).bytes, to: .auth)
        #expect(await central.rawAnswers(.auth).last == [0x10, 0x01, 0x04])
    }

    @Test func theWrongKeyFaultRefusesEvenTheRightKey() async throws {
        let band = Self.band()
        await band.inject(.wrongKey)
        let central = await Central(band)
        let answer = try await central.auth(key: .simulatorDefault)
        #expect(answer.error?.code == .authKeyRefused)
        // Nothing is answered before auth but a refusal.
        await central.write(HuamiConfigRequest.alarmStatus.bytes, to: .configuration)
        #expect(try HuamiConfigAnswer(bytes: await central.rawAnswers(.configuration).last ?? []) == .other(opcode: 0x0D, status: 4, rest: []))
        await central.write(HuamiFetchRequest.activity(since: Int64(Self.now.timeIntervalSince1970) - 3600, zone: Self.berlin).bytes, to: .fetchControl)
        #expect(try HuamiFetchAnswer(bytes: await central.rawAnswers(.fetchControl).last ?? []).error?.code == .fetchRefused)
        #expect(await band.statistics.requestsBeforeAuth == 2)
    }

    @Test func alarmsRoundTripThroughTheTenSlotsWithoutLabels() async throws {
        let band = Self.band(alarms: [Alarm(slot: 0, label: "Work", hour: 6, minute: 45, repeatDays: .workdays)])
        #expect(await band.alarms == [Alarm(slot: 0, hour: 6, minute: 45, repeatDays: .workdays)])
        let central = await Central(band)
        _ = try await central.auth(key: .simulatorDefault)
        let written = [HuamiAlarm(slot: 2, snoozeAllowed: false, hour: 7, minute: 30, repeatDays: .once),
                       HuamiAlarm(slot: 9, isEnabled: false, hour: 22, minute: 5, repeatDays: AlarmRepeat(rawValue: 0b0100_0001))]
        for alarm in written { await central.write(HuamiConfigRequest.setAlarm(alarm).bytes, to: .configuration) }
        await central.write(HuamiConfigRequest.clearAlarm(slot: 0).bytes, to: .configuration)
        #expect(try await central.rawAnswers(.configuration).map { try HuamiConfigAnswer(bytes: $0) } == Array(repeating: .alarmSet(status: 1), count: 3))

        await central.write(HuamiConfigRequest.alarmStatus.bytes, to: .configuration)
        #expect(try HuamiConfigAnswer(bytes: await central.rawAnswers(.configuration).last!) == .alarmStatus([
            HuamiAlarmStatus(slot: 2, isEnabled: true), HuamiAlarmStatus(slot: 9, isEnabled: false)]))

        let before = await central.rawAnswers(.configuration).count
        await central.write(HuamiConfigRequest.alarmTable.bytes, to: .configuration)
        var assembler = HuamiConfigChunkAssembler(), table: [HuamiAlarm]?
        for raw in await central.rawAnswers(.configuration).dropFirst(before) {
            guard case let .chunk(chunk) = try HuamiConfigAnswer(bytes: raw) else { Issue.record("not a chunk"); continue }
            if let whole = try assembler.feed(chunk) { table = try HuamiAlarmTable.alarms(payload: whole.payload) }
        }
        #expect(table == written)
        #expect(await band.alarms == written.map(\.alarm))
        #expect(await band.alarmSlots.count == 10)

        // What the simulated watch remembers between runs makes the same band again.
        let again = Self.band(alarms: await band.alarms)
        let slots = await band.alarmSlots
        #expect(await again.alarmSlots == slots)
    }

    @Test func heartRateSettingsAndAOneOffMeasurement() async throws {
        let band = Self.band(monitors: [MonitorConfig(type: .heartRate, schedule: MonitorSchedule(enabled: true, intervalMinutes: 30))])
        #expect(await band.heartRateInterval == 30)
        let central = await Central(band)
        await central.write(HuamiHeartRateCommand.interval(minutes: 5).bytes, to: .heartRateControlPoint)
        await central.write(HuamiHeartRateCommand.sleepMonitoring(false).bytes, to: .heartRateControlPoint)
        #expect(await band.heartRateInterval == 5)
        #expect(!(await band.sleepHeartRate))
        #expect(await band.monitorTable.map(\.schedule.enabled) == [true, false])

        // miband2's request_heartbeat: stop, then start; the reading comes on 2A37.
        let expected = await band.measuredBPM
        await central.write(HuamiHeartRateCommand.manualMeasurement(false).bytes, to: .heartRateControlPoint)
        await central.write(HuamiHeartRateCommand.manualMeasurement(true).bytes, to: .heartRateControlPoint)
        let reading = try await central.next(.heartRateMeasurement)
        #expect(reading == [0x00, expected])
    }

    @Test func theClockTakesMiband2sZeroBasedWeekdayAndReadsBackWhatWasSet() async throws {
        let band = Self.band()
        let central = await Central(band)
        // 2026-01-02 03:04:05, a Friday: miband2 writes weekday 4 (Python's), zone 0.
        await central.write([0xEA, 0x07, 1, 2, 3, 4, 5, 4, 0, 0, 0], to: .currentTime)
        let read = try HuamiTime(currentTimeBytes: await band.read(SimulatedHuamiBand.Characteristic.currentTime))
        #expect(read == HuamiTime(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, zoneQuarterHours: 0))
        #expect(await band.statistics.clockWritesWithWrongWeekday == 1)
        // A time that cannot be is refused and the clock stays.
        await central.write([0xEA, 0x07, 13, 2, 3, 4, 5, 4, 0, 0, 0], to: .currentTime)
        #expect(await band.statistics.writesRefused == 1)
        #expect(try HuamiTime(currentTimeBytes: await band.read(SimulatedHuamiBand.Characteristic.currentTime)) == read)
    }

    @Test func theBatteryReadsThroughTheCodecAndCarriesDatesWhereMiband2ReadsThem() async throws {
        let band = Self.band()
        await band.setBattery(HuamiBattery(level: 42, state: 1))
        let bytes = try await band.read(SimulatedHuamiBand.Characteristic.battery)
        #expect(try HuamiBattery(bytes: bytes).status == BatteryStatus(level: 42, state: .charging))
        #expect(bytes.count == 20)
        let charged = HuamiTime(unixSeconds: await band.lastCharge, zone: Self.berlin)
        #expect(Int(bytes[11]) | Int(bytes[12]) << 8 == charged.year && Int(bytes[13]) == charged.month && Int(bytes[14]) == charged.day)
    }

    @Test(arguments: [HuamiModel.miBand5, .miBand4])
    func aFetchOfEveryMinuteEqualsTheGroundTruth(model: HuamiModel) async throws {
        let band = Self.band(days: 3, model: model) { $0.maxMinutesPerFetch = 1000 }
        let history = band.history
        let central = await Central(band)
        _ = try await central.auth(key: .simulatorDefault)
        var since = history.start - 7 * 86_400, samples: [HuamiSample] = [], reader = HuamiSleepReader(), items: [SleepItem] = []
        var heartRates: [HeartRateSample] = [], fetches = 0
        while true {
            let fetched = try await central.fetch(since: since, format: history.format)
            guard let activity = fetched.activity else { break }
            #expect(activity.start == (fetches == 0 ? history.start : since))
            samples += activity.samples
            items += reader.read(activity)
            heartRates += activity.heartRates
            since = activity.end
            fetches += 1
        }
        #expect(fetches == (history.minutes + 999) / 1000)
        #expect(samples.count == history.minutes)
        // Read in fetches, a stretch the boundary cuts is two items (protocol-spec/huami/huami.md §9 rule 4).
        #expect(joined(items) == joined(history.sleepItems))
        #expect(heartRates == history.heartRates)
        #expect(!items.isEmpty && heartRates.count > 500)

        // Independently of the reader: each minute's stage is the generator's at the minute's middle.
        let format = history.format
        var carried: UInt8?
        for (index, sample) in samples.enumerated() {
            let middle = history.start + Int64(index) * 60 + 30
            let generated = history.generated.first { $0.start <= middle && middle < $0.end }?.stage ?? .awake
            let expected: SleepStage = format == .fourByte && generated == .rem ? .light : generated
            switch HuamiSleepReader.minute(sample, format: format, carriedKind: &carried) {
            case let .asleep(stage): #expect(stage == expected, "minute \(index)")
            case .awake: #expect(expected == .awake, "minute \(index)")
            case .noData: Issue.record("minute \(index) has no data")
            }
        }
        // Everything acknowledged is dropped: a fetch from the start gets nothing more.
        #expect(try await central.fetch(since: history.start, format: format).activity == nil)
    }

    /// The BlueZ peripheral's band paces its data (stop 49's CI: EATT carried a packet 255 behind
    /// its turn when it flooded them); the transfer is the same, only paused between bursts.
    @Test("a paced band pauses after every burst of data packets and sends the same transfer")
    func pacedTransfer() async throws {
        let band = Self.band(days: 1) { $0.maxMinutesPerFetch = 240; $0.pacing = .init(packets: 32, pause: .milliseconds(10)) }
        let pauses = LossCounter()
        await band.pausing { _ in await pauses.add() }
        let central = await Central(band)
        _ = try await central.auth(key: .simulatorDefault)
        let fetched = try await central.fetch(since: band.history.start, format: band.history.format)
        let packets = await band.statistics.dataPacketsSent
        #expect(fetched.activity?.samples.count == 240)
        #expect(await pauses.count == (packets - 1) / 32, "a pause after each full burst of 32 of the \(packets) packets but the last")
        let unpaced = Self.band(days: 1) { $0.maxMinutesPerFetch = 240 }
        let again = await Central(unpaced)
        _ = try await again.auth(key: .simulatorDefault)
        #expect(try await again.fetch(since: unpaced.history.start, format: unpaced.history.format).activity == fetched.activity)
    }

    @Test func anUnacknowledgedTransferIsSentAgain() async throws {
        let band = Self.band(days: 1) { $0.maxMinutesPerFetch = 120 }
        let central = await Central(band)
        _ = try await central.auth(key: .simulatorDefault)
        let start = band.history.start
        let first = try await central.fetch(since: start, format: band.history.format, acknowledge: false)
        let again = try await central.fetch(since: start, format: band.history.format)
        #expect(first.activity == again.activity && first.activity?.samples.count == 120)
        let next = try await central.fetch(since: start, format: band.history.format)
        #expect(next.activity?.start == start + 120 * 60)
        #expect(await band.firstHeld == start + 240 * 60)
    }

    /// With `late` answers too: the link is lost after the packets before the cut have gone out.
    @Test(arguments: [AnswerTiming.immediate, .late(.milliseconds(50))])
    func aTransferCutMidWayLosesTheLinkAndKeepsTheData(_ timing: AnswerTiming) async throws {
        let band = Self.band(days: 1) { $0.maxMinutesPerFetch = 240; $0.answerTiming = timing }
        let central = await Central(band)
        let losses = LossCounter()
        await band.onLinkLoss { await losses.add() }
        _ = try await central.auth(key: .simulatorDefault)
        await band.inject(.cutTransfer(afterPackets: 5))
        let cut = try await central.fetch(since: band.history.start, format: band.history.format)
        #expect(cut.error?.code == .transferEndedEarly)
        #expect(cut.packets == 5)
        #expect(await losses.count == 1)
        #expect(await band.statistics.transfersCut == 1)
        #expect(!(await band.isAuthenticated))
        // The next link fetches the same minutes whole.
        await band.centralDisconnected()
        let again = await Central(band)
        _ = try await again.auth(key: .simulatorDefault)
        let whole = try await again.fetch(since: band.history.start, format: band.history.format)
        #expect(whole.activity?.samples == band.history.samples(from: band.history.start, count: 240))
    }

    @Test func immediateAnswersGoOutFromInsideTheWriteHandler() async throws {
        let band = Self.band()
        let central = await Central(band)
        await central.write(HuamiAuthRequest.requestRandom(.crypt).bytes, to: .auth)
        #expect(await central.rawAnswers(.auth).count == 1, "answered before the write returned")
    }

    /// `late`: held while the write is handled, sent once it returned, in order; the next write's
    /// answers never overtake them.
    @Test func lateAnswersGoOutAfterTheWriteHandlerReturnedAndInOrder() async throws {
        let band = Self.band(days: 1) { $0.answerTiming = .late(.milliseconds(150)); $0.maxMinutesPerFetch = 120 }
        let central = await Central(band)
        await central.write(HuamiAuthRequest.requestRandom(.crypt).bytes, to: .auth)
        #expect(await central.rawAnswers(.auth).isEmpty, "nothing before the write returned")
        guard case let .random(challenge) = try HuamiAuthAnswer(bytes: try await central.next(.auth)) else { throw HuamiError(.authFailed, "no challenge") }
        await central.write(try HuamiAuthKey.simulatorDefault.answer(challenge: challenge, flags: .crypt).bytes, to: .auth)
        #expect(try HuamiAuthAnswer(bytes: try await central.next(.auth)) == .accepted)
        let fetched = try await central.fetch(since: band.history.start, format: band.history.format)
        #expect(fetched.error == nil)
        #expect(fetched.activity?.samples == band.history.samples(from: band.history.start, count: 120), "every packet, in order, before the end")
    }

    @Test(arguments: [
        (SimulatedHuamiBand.Fault.skipCounter(packet: 3), HuamiError.Code.counterSkipped),
        (.shortPacket(packet: 2), .transferEndedEarly),
        (.countOff(bytes: 8), .transferEndedEarly),
        (.countOff(bytes: -8), .countMismatch),
        (.countOff(bytes: 3), .countNotWholeSamples),
    ])
    func aCorruptedTransferIsCaughtByTheAssembler(fault: SimulatedHuamiBand.Fault, code: HuamiError.Code) async throws {
        let band = Self.band(days: 1) { $0.maxMinutesPerFetch = 60 }
        let central = await Central(band)
        _ = try await central.auth(key: .simulatorDefault)
        await band.inject(fault)
        let damaged = try await central.fetch(since: band.history.start, format: band.history.format)
        #expect(damaged.error?.code == code)
        // Only the next transfer is damaged; unacknowledged, it comes again whole.
        let whole = try await central.fetch(since: band.history.start, format: band.history.format)
        #expect(whole.error == nil && whole.activity?.samples.count == 60)
    }
}

/// Adjacent items of one stage as one.
func joined(_ items: [SleepItem]) -> [SleepItem] {
    var out: [SleepItem] = []
    for item in items {
        if let last = out.last, last.stage == item.stage, last.end == item.start {
            out[out.count - 1].duration += item.duration
        } else {
            out.append(item)
        }
    }
    return out
}

actor LossCounter {
    var count = 0
    func add() { count += 1 }
}

/// A central on the band's link: writes requests, keeps every notification by characteristic.
actor Central {
    typealias Characteristic = SimulatedHuamiBand.Characteristic
    let band: SimulatedHuamiBand
    private var answers: [Characteristic: [[UInt8]]] = [:]
    private var taken: [Characteristic: Int] = [:]

    init(_ band: SimulatedHuamiBand) async {
        self.band = band
        await band.centralConnected { [weak self] characteristic, bytes in await self?.keep(bytes, from: characteristic) }
    }

    private func keep(_ bytes: [UInt8], from characteristic: Characteristic) { answers[characteristic, default: []].append(bytes) }

    func rawAnswers(_ characteristic: Characteristic) -> [[UInt8]] { answers[characteristic] ?? [] }

    func write(_ bytes: [UInt8], to characteristic: Characteristic) async { await band.centralWrote(bytes, to: characteristic) }

    /// The next notification of `characteristic` not taken yet, waiting up to 2 s.
    func next(_ characteristic: Characteristic) async throws -> [UInt8] {
        for _ in 0..<200 {
            let all = answers[characteristic] ?? [], index = taken[characteristic] ?? 0
            if index < all.count {
                taken[characteristic] = index + 1
                return all[index]
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HuamiError(.transferEndedEarly, "no notification of \(characteristic)")
    }

    func auth(key: HuamiAuthKey, flags: HuamiAuthFlags = .crypt) async throws -> HuamiAuthAnswer {
        taken[.auth] = answers[.auth]?.count ?? 0
        await write(HuamiAuthRequest.requestRandom(flags).bytes, to: .auth)
        guard case let .random(challenge) = try HuamiAuthAnswer(bytes: try await next(.auth)) else { throw HuamiError(.authFailed, "no challenge") }
        await write(try key.answer(challenge: challenge, flags: flags).bytes, to: .auth)
        return try HuamiAuthAnswer(bytes: try await next(.auth))
    }

    struct Fetched {
        var activity: HuamiActivity?
        var error: HuamiError?
        var packets = 0
    }

    /// One fetch as §7.1 has it: start, data, end, and the acknowledgement once the data is whole.
    func fetch(since: Int64, format: HuamiSampleFormat, acknowledge: Bool = true) async throws -> Fetched {
        taken[.fetchControl] = answers[.fetchControl]?.count ?? 0
        let dataBefore = answers[.activityData]?.count ?? 0
        await write(HuamiFetchRequest.activity(since: since, zone: SimulatedHuamiBandTests.berlin).bytes, to: .fetchControl)
        let startAnswer = try HuamiFetchAnswer(bytes: try await next(.fetchControl))
        guard case let .started(count, start) = startAnswer else { return Fetched(error: startAnswer.error) }
        if count == 0 {
            await write(HuamiFetchRequest.acknowledge.bytes, to: .fetchControl)
            _ = try await next(.fetchControl)
            return Fetched()
        }
        var assembler: HuamiFetchAssembler
        do { assembler = try HuamiFetchAssembler(count: count, format: format) } catch { return Fetched(error: error) }
        await write(HuamiFetchRequest.fetchData.bytes, to: .fetchControl)
        let end = try? HuamiFetchAnswer(bytes: try await next(.fetchControl))
        let packets = Array((answers[.activityData] ?? []).dropFirst(dataBefore))
        do {
            for packet in packets { try assembler.feed(packet) }
            guard case let .finished(crc) = end else { return Fetched(error: assembler.abandoned(), packets: packets.count) }
            let data = try assembler.finish(crc32: crc, verifyCRC: true)
            if acknowledge {
                await write(HuamiFetchRequest.acknowledge.bytes, to: .fetchControl)
                #expect(try HuamiFetchAnswer(bytes: try await next(.fetchControl)) == .acknowledged)
            }
            return Fetched(activity: try HuamiActivity(start: start, format: format, data: data), packets: packets.count)
        } catch {
            return Fetched(error: error as? HuamiError, packets: packets.count)
        }
    }
}
