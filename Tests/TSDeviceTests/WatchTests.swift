import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulator
import TSSleep
import TSTransport
import Testing

@Suite struct WatchTests {
    @Test func connectNegotiatesReadsInfoAndSetsTheClock() async throws {
        let rig = try Rig()
        let info = try await rig.watch.connect()
        #expect(info.model == "TS-Sim W10")
        let reported = DeviceInfoCapabilities.simulatorDefault
        #expect(info.capabilities.alarmLimits == AlarmLimits(maxAlarms: reported.maxAlarms, labelMaxBytes: reported.labelMaxBytes,
                                                             remarkMaxBytes: reported.remarkMaxBytes, maxSmartWindow: 60))
        #expect(info.capabilities.monitorTypes == reported.monitorTypes && info.capabilities.statisticsRule == reported.statisticsRule)
        #expect(info.capabilities.naps == reported.supportsNaps && info.capabilities.liveStages == reported.supportsLiveSleep)
        #expect(info.capabilities.sleepSync?.deletesSynced == reported.deletesSyncedRecords && info.capabilities.ring && info.capabilities.alarmAlerts)
        let state = await rig.simulator.state
        #expect(state.zone == "Europe/Berlin")
        #expect(state.utcOffset == 3600)
        #expect(await rig.watch.supportedCommands.contains(.sleepQuery))
        #expect(try await rig.watch.battery() == BatteryStatus(level: 82, state: .discharging))
    }

    @Test func alarmTableRoundTripsAndReplacesTheWholeTable() async throws {
        let rig = try Rig(alarms: [Alarm(slot: 7, label: "Old", hour: 6, minute: 0)])
        try await rig.watch.connect()
        #expect(try await rig.watch.alarms().map(\.slot) == [7])
        let table = [
            Alarm(slot: 0, label: "Work", hour: 7, minute: 0, snoozeAllowed: true, remark: "Morning alarm", repeatDays: .workdays),
            Alarm(slot: 1, label: "Medizin 💊", hour: 21, minute: 30, isEnabled: false, remark: "吃药", repeatDays: .everyday),
        ]
        try await rig.watch.setAlarms(table)
        #expect(try await rig.watch.alarms() == table)
        try await rig.watch.setAlarms([])
        #expect(try await rig.watch.alarms().isEmpty)
    }

    @Test func setAllIsValidatedAgainstTheWatchBeforeAnythingIsSent() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        let received = await rig.simulator.statistics.framesReceived
        let thirteen = (0..<13).map { Alarm(slot: UInt8($0), hour: 7, minute: UInt8($0)) }
        await #expect { try await rig.watch.setAlarms(thirteen) } throws: { error in
            "\(error)".contains("13 alarms given, but this watch holds at most 10")
        }
        let longLabel = [Alarm(slot: 4, label: String(repeating: "a", count: 40), hour: 7, minute: 0)]
        await #expect { try await rig.watch.setAlarms(longLabel) } throws: { error in
            "\(error)" == "alarm in slot 4: label is 40 bytes of UTF-8, limit 32"
        }
        let longRemark = [Alarm(slot: 2, hour: 7, minute: 0, remark: String(repeating: "药", count: 22))]
        await #expect { try await rig.watch.setAlarms(longRemark) } throws: { error in
            "\(error)" == "alarm in slot 2: remark is 66 bytes of UTF-8, limit 64"
        }
        #expect(await rig.simulator.statistics.framesReceived == received, "nothing was sent for refused tables")
    }

    @Test func monitorConfigsAreFetchedAndPushedPerType() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        #expect(try await rig.watch.monitorConfig(.heartRate) == .factoryDefault(.heartRate))
        let config = MonitorConfig(type: .spo2, schedule: MonitorSchedule(enabled: true, startMinute: 1320, endMinute: 1440, intervalMinutes: 15),
                                   alert: MonitorAlert(enabled: true, upper: 100, lower: 92))
        try await rig.watch.setMonitorConfig(config)
        #expect(try await rig.watch.monitorConfig(.spo2) == config)
        let bad = MonitorConfig(type: .stress, schedule: MonitorSchedule(enabled: true, intervalMinutes: 7))
        await #expect(throws: WatchError.self) { try await rig.watch.setMonitorConfig(bad) }
    }

    @Test func monitorTypesTheWatchLacksAreRefusedLocally() async throws {
        var caps = DeviceInfoCapabilities.simulatorDefault
        caps.monitorTypes = [.heartRate, .sleep]
        let rig = try Rig(capabilities: caps)
        try await rig.watch.connect()
        await #expect { try await rig.watch.monitorConfig(.temperature) } throws: { "\($0)".contains("temperature") }
    }

    @Test(arguments: [23, 185, 247, 517])
    func sevenDaysOfSleepArriveExactly(mtu: Int) async throws {
        let rig = try Rig(days: 7, mtu: mtu)
        try await rig.watch.connect()
        let records = try await rig.watch.sleepRecords(start: rig.start, end: nil)
        #expect(records == rig.groundTruth)
        #expect(records.count > 100)
    }

    @Test func halfOpenRangeSelectsByStartTime() async throws {
        let rig = try Rig(days: 3)
        try await rig.watch.connect()
        let middle = rig.groundTruth[rig.groundTruth.count / 2]
        let before = try await rig.watch.sleepRecords(start: rig.start, end: UInt32(middle.start))
        let after = try await rig.watch.sleepRecords(start: UInt32(middle.start), end: nil)
        #expect(before + after == rig.groundTruth)
        #expect(after.first == middle)
        #expect(try await rig.watch.sleepRecords(start: 1_000, end: 2_000).isEmpty)
    }

    /// One transfer at MTU 23 (two packets per page) with 5 % of packets dropped, 5 % corrupted,
    /// 3 % duplicated and 3 % reordered; the harsher rates are for the resumable sync (SleepSyncTests).
    @Test func sleepSurvivesDroppedCorruptedDuplicatedAndReorderedPackets() async throws {
        let faults = FaultInjection(dropRate: 0.05, duplicateRate: 0.03, corruptRate: 0.05, reorderRate: 0.03, seed: 7)
        let rig = try Rig(days: 14, faults: faults, mtu: 23)
        try await rig.watch.connect()
        let records = try await rig.watch.sleepRecords(start: rig.start, end: nil)
        #expect(records == rig.groundTruth)
        let table = [Alarm(slot: 3, label: "Faulty link", hour: 6, minute: 45)]
        try await rig.watch.setAlarms(table)
        #expect(try await rig.watch.alarms() == table)
        let stats = await rig.simulator.statistics
        #expect(stats.pagesResent + stats.corruptFramesReceived + stats.duplicateRequests > 0, "the faults were really exercised")
    }

    @Test func watchSideAlarmEditReachesEverySubscriber() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        let streams = await [rig.watch.alarmChanges(), rig.watch.alarmChanges(), rig.watch.alarmChanges()]
        let edited = Alarm(slot: 2, label: "Set on the wrist", hour: 5, minute: 50, repeatDays: .weekend)
        await rig.simulator.editAlarmsOnWatch { $0 = [edited] }
        for stream in streams {
            var iterator = stream.makeAsyncIterator()
            let change = await iterator.next()
            #expect(change?.origin == .watch)
            #expect(change?.alarms == [edited])
        }
        // The event was acknowledged: no retransmission reaches the subscribers twice.
        try await Task.sleep(for: .milliseconds(200))
        #expect(await rig.simulator.statistics.framesReceived >= 4)
    }

    @Test func commitDeletesOnlyOnADestructiveWatchAndOnlyWithTheRightCount() async throws {
        var caps = DeviceInfoCapabilities.simulatorDefault
        caps.deletesSyncedRecords = true
        let rig = try Rig(days: 2, capabilities: caps)
        try await rig.watch.connect()
        let records = try await rig.watch.sleepRecords(start: rig.start, end: nil)
        let end = UInt32(records.last!.start + 1)
        await #expect { try await rig.watch.commitSleep(start: rig.start, end: end, count: records.count - 1) } throws: { error in
            guard case let .rejected(_, status, _) = error as? WatchError else { return false }
            return status == .countMismatch
        }
        #expect(await rig.simulator.state.records.count == records.count)
        #expect(try await rig.watch.commitSleep(start: rig.start, end: end, count: records.count) == records.count)
        #expect(await rig.simulator.state.records.isEmpty)
    }

    @Test func disconnectFailsTheRunningTransferAndReconnectWorks() async throws {
        let rig = try Rig(days: 30, faults: FaultInjection(disconnectEvery: 20))
        try await rig.watch.connect()
        await #expect(throws: WatchError.self) { _ = try await rig.watch.sleepRecords(start: rig.start, end: nil) }
        #expect(await rig.watch.isConnected == false)
        try await rig.watch.connect()
        #expect(try await rig.watch.battery().level == 82)
    }

    @Test func aCaptureReplaysToTheSameResults() async throws {
        let rig = try Rig(days: 3)
        let recording = RecordingTransport(recording: LoopbackTransport(peripheral: rig.simulator, mtu: try ATTMTU(185)))
        var configuration = WatchConfiguration()
        configuration.timeZone = Rig.berlin
        configuration.now = { Rig.now }
        let original = Watch(transport: recording, configuration: configuration)
        try await original.connect()
        try await original.setAlarms([Alarm(slot: 1, label: "Replay", hour: 8, minute: 15)])
        let alarms = try await original.alarms()
        let records = try await original.sleepRecords(start: rig.start, end: nil)
        await original.disconnect()

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try CaptureFile.write(await recording.entries(), to: file)
        let replayed = Watch(transport: ReplayTransport(capture: try CaptureFile.read(from: file)), configuration: configuration)
        let info = try await replayed.connect()
        #expect(info == (await original.info))
        try await replayed.setAlarms([Alarm(slot: 1, label: "Replay", hour: 8, minute: 15)])
        #expect(try await replayed.alarms() == alarms)
        #expect(try await replayed.sleepRecords(start: rig.start, end: nil) == records)
        #expect(records == rig.groundTruth)
    }
}

@Suite struct LiveSleepTests {
    @Test func liveStageEventsReachSubscribersOnlyWhileSubscribed() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        let events = await rig.watch.liveStages()
        await rig.simulator.reportLiveStage(LiveStageEvent(kind: .fellAsleep, stage: .light, time: 1_000))   // not subscribed yet: not sent
        try await rig.watch.setLiveSleepEvents(true)
        let sent = [LiveStageEvent(kind: .fellAsleep, stage: .light, time: 2_000),
                    LiveStageEvent(kind: .stageChanged, stage: .deep, time: 2_600),
                    LiveStageEvent(kind: .wokeUp, stage: .awake, time: 9_000)]
        for event in sent { await rig.simulator.reportLiveStage(event) }
        var iterator = events.makeAsyncIterator()
        var received: [LiveStageEvent] = []
        for _ in sent { if let event = await iterator.next() { received.append(event) } }
        #expect(received == sent)
    }

    @Test func liveEventsAreRefusedOnAWatchWithoutThem() async throws {
        var caps = DeviceInfoCapabilities.simulatorDefault
        caps.supportsLiveSleep = false
        let rig = try Rig(capabilities: caps)
        try await rig.watch.connect()
        await #expect { try await rig.watch.setLiveSleepEvents(true) } throws: { "\($0)" == "this watch does not support live sleep events" }
    }

    @Test func requestsWithoutAConnectionFailClearly() async throws {
        let rig = try Rig()
        await #expect { try await rig.watch.alarms() } throws: { "\($0)" == "the watch is not connected" }
    }
}

@Suite struct DailySleepTests {
    @Test func dailyModelsFollowTheWatchRule() async throws {
        for rule in StatisticsRule.allCases {
            var caps = DeviceInfoCapabilities.simulatorDefault
            caps.statisticsRule = rule
            let rig = try Rig(days: 7, capabilities: caps)
            try await rig.watch.connect()
            let days = try await rig.watch.dailySleep(start: rig.start, end: nil, timeZone: Rig.berlin)
            #expect(days == SleepProcessor.process(rig.groundTruth, rule: rule, timeZone: Rig.berlin), "rule \(rule)")
            #expect(days.allSatisfy { $0.statisticsRule == rule })
            #expect(days.count >= 7)
        }
    }

    @Test func aRangeLimitsTheDays() async throws {
        let rig = try Rig(days: 7)
        try await rig.watch.connect()
        let all = try await rig.watch.dailySleep(start: rig.start, end: nil, timeZone: Rig.berlin)
        let cut = UInt32(all[3].belongingDate - 4 * 3600)   // 20:00 before the fourth date
        let early = try await rig.watch.dailySleep(start: rig.start, end: cut, timeZone: Rig.berlin)
        #expect(early.map(\.date) == all.prefix(3).map(\.date))
    }
}
