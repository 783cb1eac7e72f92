import Foundation
import Testing
import TSDevice
import TSModels
import TSProtocol
import TSSimulator
import TSTransport

/// Protocol v1.1 between the Watch actor and the simulated watch: negotiation, smart windows and
/// their limits, RING, alarm alerts, and version-1 peers on either side.
@Suite struct SmartWakeWatchTests {
    /// Monday 2025-11-03 07:00 in Berlin (the rig's zone) = 06:00 UTC.
    static let sevenBerlin = Date(timeIntervalSince1970: 1_762_149_600)
    static func at(_ minute: Int) -> Date { sevenBerlin.addingTimeInterval(TimeInterval(minute * 60)) }
    static let work = Alarm(slot: 0, label: "Work", hour: 7, minute: 0, snoozeAllowed: true, repeatDays: .workdays)

    /// The first `count` alerts of `stream`, or fewer after 5 s.
    static func alerts(_ stream: AsyncStream<AlarmAlert>, count: Int) async -> [AlarmAlert] {
        await withTaskGroup(of: [AlarmAlert]?.self) { group in
            group.addTask {
                var got: [AlarmAlert] = []
                for await alert in stream {
                    got.append(alert)
                    if got.count == count { break }
                }
                return got
            }
            group.addTask { try? await Task.sleep(for: .seconds(5)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test("a v1.1 watch is asked for its extensions; its limits join the capabilities")
    func negotiationFillsTheCapabilities() async throws {
        let rig = try Rig()
        let info = try await rig.watch.connect()
        #expect(info.capabilities.maxSmartWindow == 60)
        #expect(info.capabilities.ring)
        #expect(info.capabilities.alarmAlerts)
        #expect(await rig.watch.extensions == ExtensionsResponse(enabled: [.smartWindows, .alarmAlerts], maxSmartWindow: 60))
        #expect(await rig.watch.supportedCommands.isSuperset(of: CommandID.addedInVersion1_1))
    }

    @Test("a smart window is set, read back and kept by the watch")
    func smartWindowRoundTrips() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        var smart = Self.work
        smart.smartWindow = 30
        let table = [smart, Alarm(slot: 3, hour: 9, minute: 30, repeatDays: .weekend)]
        try await rig.watch.setAlarms(table)
        #expect(try await rig.watch.alarms() == table)
        #expect(await rig.simulator.state.alarms.map(\.smartWindow) == [30, 0])
    }

    @Test("a window over the watch's limit is refused before sending, naming the alarm and the limit")
    func windowOverTheLimitIsAnInvalidAlarm() async throws {
        let rig = try Rig(alarms: [Self.work])
        try await rig.watch.connect()
        var long = Self.work
        long.slot = 2
        long.smartWindow = 90
        let received = await rig.simulator.statistics.framesReceived
        await #expect { try await rig.watch.setAlarms([Self.work, long]) } throws: { error in
            guard let failure = error as? WatchError else { return false }
            return failure.category == .invalidInput && "\(failure)" == "alarm in slot 2: smart window is 90 minutes, this watch's limit is 60"
        }
        #expect(await rig.simulator.statistics.framesReceived == received, "nothing was sent")
        #expect(await rig.simulator.state.alarms == [Self.work])
    }

    @Test("a version-1 watch: no v1.1 capabilities; smart windows and RING are not supported, nothing is sent")
    func versionOneWatchRefusesSmartWindowsLocally() async throws {
        let rig = try Rig(alarms: [Self.work], speaksVersion1_1: false)
        let info = try await rig.watch.connect()
        #expect(info.capabilities.maxSmartWindow == 0 && !info.capabilities.ring && !info.capabilities.alarmAlerts)
        #expect(info.capabilities.maxAlarms == DeviceInfoCapabilities.simulatorDefault.maxAlarms)
        #expect(await rig.watch.supportedCommands.isDisjoint(with: CommandID.addedInVersion1_1))
        var smart = Self.work
        smart.smartWindow = 30
        let received = await rig.simulator.statistics.framesReceived
        await #expect { try await rig.watch.setAlarms([smart]) } throws: { error in
            guard let failure = error as? WatchError else { return false }
            return failure.category == .notSupported && "\(failure)".contains("slot 0 asks for 30 minutes") && "\(failure)".contains("limit is 0")
        }
        await #expect { try await rig.watch.ring(slot: 0, reason: .smartWake) } throws: { ($0 as? WatchError)?.category == .notSupported }
        #expect(await rig.simulator.statistics.framesReceived == received, "nothing was sent")
        try await rig.watch.setAlarms([Self.work])
        #expect(try await rig.watch.alarms() == [Self.work])
    }

    /// The written and notified bytes of one session: connect, read and write alarms, battery.
    static func session(watchSpeaks1_1: Bool, central: ExtensionFeatures) async throws -> [CaptureEntry] {
        var recorder: RecordingTransport?
        // Slow timeouts: a retransmission on a busy machine would change the bytes.
        let rig = try Rig(fast: false, alarms: [Self.work], speaksVersion1_1: watchSpeaks1_1, centralExtensions: central) { inner in
            let recording = RecordingTransport(recording: inner)
            recorder = recording
            return recording
        }
        try await rig.watch.connect()
        _ = try await rig.watch.alarms()
        try await rig.watch.setAlarms([Self.work, Alarm(slot: 1, label: "Late", hour: 9, minute: 15)])
        _ = try await rig.watch.battery()
        await rig.watch.disconnect()
        return try await #require(recorder).entries().filter { $0.direction == .write || $0.direction == .notification }
    }

    @Test("a v1.1 central and a version-1 watch exchange exactly the bytes of two version-1 peers")
    func versionOneWatchSeesVersionOneBytes() async throws {
        let asVersion1 = try await Self.session(watchSpeaks1_1: false, central: [])
        let asVersion1_1 = try await Self.session(watchSpeaks1_1: false, central: .version1_1)
        #expect(!asVersion1.isEmpty)
        #expect(asVersion1.map(\.direction) == asVersion1_1.map(\.direction))
        #expect(asVersion1.map(\.hex) == asVersion1_1.map(\.hex))
    }

    @Test("a version-1 central and a v1.1 watch: no v1.1 command on the wire, windows hidden, and its table turns them off")
    func versionOneCentralWithAVersion11Watch() async throws {
        let entries = try await Self.session(watchSpeaks1_1: true, central: [])
        var reassembler = FrameReassembler()
        let written = entries.filter { $0.direction == .write }.flatMap { reassembler.append($0.bytes, at: .zero) }
        let commands = written.compactMap { event -> CommandID? in if case let .frame(frame) = event { frame.command } else { nil } }
        #expect(commands.contains(.alarmsSet))
        #expect(Set(commands).isDisjoint(with: CommandID.addedInVersion1_1))

        var smart = Self.work
        smart.smartWindow = 30
        let rig = try Rig(alarms: [smart], centralExtensions: [])
        let info = try await rig.watch.connect()
        #expect(info.capabilities.maxSmartWindow == 0, "not enabled on this connection")
        #expect(try await rig.watch.alarms() == [Self.work], "the window is left out of what this central sees")
        #expect(await rig.simulator.state.alarms == [smart], "but the watch keeps it")
        try await rig.watch.setAlarms([Self.work])
        #expect(await rig.simulator.state.alarms == [Self.work], "a table without windows turns them off")
    }

    @Test("the watch's own smart wake reaches the central as alerts: ringing early, snoozed, dismissed")
    func smartWakeAlertsReachTheCentral() async throws {
        let rig = try Rig()
        try await rig.watch.connect()
        var smart = Self.work
        smart.smartWindow = 30
        try await rig.watch.setAlarms([smart])
        let stream = await rig.watch.alarmAlerts()
        await rig.simulator.setWearerStage(.deep, at: Self.at(-60))
        for minute in -59 ... -19 { await rig.simulator.advanceClock(to: Self.at(minute)) }
        #expect(await rig.simulator.alertLog.isEmpty, "deep sleep: nothing yet")
        await rig.simulator.setWearerStage(.light, at: Self.at(-18))
        await rig.simulator.snoozeRinging(at: Self.at(-17))
        await rig.simulator.advanceClock(to: Self.at(-8))
        await rig.simulator.dismissRinging(at: Self.at(-7))
        for minute in -6...3 { await rig.simulator.advanceClock(to: Self.at(minute)) }
        func seconds(_ minute: Int) -> UInt32 { UInt32(Self.at(minute).timeIntervalSince1970) }
        let expected = [
            AlarmAlert(kind: .ringing, slot: 0, trigger: .smartWindow, time: seconds(-18)),
            AlarmAlert(kind: .snoozed, slot: 0, trigger: .smartWindow, time: seconds(-17), snoozeMinutes: 9),
            AlarmAlert(kind: .ringing, slot: 0, trigger: .snoozeEnded, time: seconds(-8)),
            AlarmAlert(kind: .dismissed, slot: 0, trigger: .snoozeEnded, time: seconds(-7)),
        ]
        #expect(await Self.alerts(stream, count: 4) == expected)
        #expect(await rig.simulator.alertLog == expected, "and nothing at 07:00")
        #expect(await rig.watch.rejectedEvents == 0)
    }

    @Test("RING from the gateway: rings, then alreadyRinging, alreadyRang; the watch's alarm does not ring again")
    func ringStandsForTheNextOccurrence() async throws {
        let rig = try Rig(alarms: [Self.work])
        try await rig.watch.connect()
        let stream = await rig.watch.alarmAlerts()
        await rig.simulator.setWearerStage(.light, at: Self.at(-20))
        #expect(try await rig.watch.ring(slot: 0, reason: .smartWake) == .ringing)
        #expect(try await rig.watch.ring(slot: 0, reason: .smartWake) == .alreadyRinging)
        await rig.simulator.dismissRinging(at: Self.at(-19))
        #expect(try await rig.watch.ring(slot: 0, reason: .smartWake) == .alreadyRang)
        for minute in -18...2 { await rig.simulator.advanceClock(to: Self.at(minute)) }
        let heard = await Self.alerts(stream, count: 2)
        #expect(heard.map(\.kind) == [.ringing, .dismissed])
        #expect(heard.map(\.trigger) == [.ringSmartWake, .ringSmartWake])
        #expect(await rig.simulator.alertLog.count == 2, "no ring at 07:00")
    }

    @Test("RING for an occurrence hours away is refused by the watch with its reason")
    func ringTooEarlyIsRefused() async throws {
        let rig = try Rig(alarms: [Self.work])
        try await rig.watch.connect()
        await rig.simulator.advanceClock(to: Self.at(-300))
        await #expect { try await rig.watch.ring(slot: 0, reason: .smartWake) } throws: { error in
            guard case let .rejected(command, status, message) = error as? WatchError else { return false }
            return command == "RING" && status == .invalidValue && message == "slot 0: next occurrence 07:00 is 300 minutes away, limit 255"
        }
        await #expect { try await rig.watch.ring(slot: 9, reason: .test) } throws: { "\($0)".contains("slot 9 holds no alarm") }
        #expect(await rig.simulator.alertLog.isEmpty)
    }

    @Test("a once-alarm rung by RING switches itself off and says so")
    func onceAlarmRungByRingTurnsOff() async throws {
        let once = Alarm(slot: 5, label: "Flight", hour: 7, minute: 0)
        let rig = try Rig(alarms: [once])
        try await rig.watch.connect()
        let changes = await rig.watch.alarmChanges()
        await rig.simulator.advanceClock(to: Self.at(-10))
        #expect(try await rig.watch.ring(slot: 5, reason: .smartWake) == .ringing)
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change?.origin == .onceAlarmFired)
        #expect(change?.alarms.first?.isEnabled == false)
        #expect(await rig.simulator.state.alarms.first?.isEnabled == false)
    }

    @Test("alerts are sent only to a central that enabled them")
    func alertsNeedTheFeature() async throws {
        let rig = try Rig(alarms: [Self.work], centralExtensions: [.smartWindows])
        let info = try await rig.watch.connect()
        #expect(!info.capabilities.alarmAlerts)
        #expect(try await rig.watch.ring(slot: 0, reason: .test) == .ringing)
        #expect(await rig.simulator.alertLog.count == 1, "the watch rang")
        try await Task.sleep(for: .milliseconds(100))
        #expect(await rig.simulator.statistics.framesReceived == 5, "HELLO, EXTENSIONS, DEVICE_INFO, TIME_SET, RING, and no event ack")
    }
}
