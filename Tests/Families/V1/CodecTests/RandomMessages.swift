import TSGATT
import TSModels
import TSProtocol

/// Random but valid values of every message kind.
struct MessageGenerator {
    var rng: SeededRandom

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func bool() -> Bool { Bool.random(using: &rng) }
    mutating func u8() -> UInt8 { UInt8.random(in: 0...255, using: &rng) }
    mutating func u16() -> UInt16 { UInt16.random(in: 0...UInt16.max, using: &rng) }
    mutating func u32() -> UInt32 { UInt32.random(in: 0...UInt32.max, using: &rng) }

    /// A string of at most `maxBytes` UTF-8 bytes mixing ASCII, accents, CJK and emoji.
    mutating func text(maxBytes: Int) -> String {
        let pieces = ["a", "Z", " ", "7", "é", "ß", "吃", "药", "💊", "⏰", "-", "_"]
        var result = ""
        let target = int(0...maxBytes)
        while true {
            let piece = pieces[int(0...pieces.count - 1)]
            if result.utf8.count + piece.utf8.count > target { break }
            result += piece
        }
        return result
    }

    mutating func alarm(slot: UInt8) -> Alarm {
        Alarm(slot: slot, label: text(maxBytes: 32), hour: UInt8(int(0...23)), minute: UInt8(int(0...59)),
              isEnabled: bool(), snoozeAllowed: bool(), remark: text(maxBytes: 60),
              repeatDays: AlarmRepeat(rawValue: UInt8(int(0...0x7F))), smartWindow: bool() ? 0 : UInt8(int(1...255)))
    }

    mutating func alarms() -> [Alarm] {
        var slots = Array(UInt8(0)...UInt8(20))
        slots.shuffle(using: &rng)
        return slots.prefix(int(0...10)).map { alarm(slot: $0) }
    }

    mutating func monitorConfig() -> MonitorConfig {
        let start = UInt16(int(0...1439))
        let end = UInt16(int(Int(start) + 1...1440))
        let lower = Int16(int(-100...200))
        return MonitorConfig(
            type: MonitorType.allCases[int(0...5)],
            schedule: MonitorSchedule(enabled: bool(), startMinute: start, endMinute: end, intervalMinutes: UInt16(5 * int(1...288))),
            alert: MonitorAlert(enabled: bool(), upper: lower + Int16(int(1...100)), lower: lower))
    }

    mutating func records(count: Int) -> [SleepItem] {
        var start = Int64(int(1_700_000_000...1_800_000_000))
        return (0..<count).map { _ in
            let item = SleepItem(stage: SleepStage.allCases[int(0...3)], start: start, duration: Int64(int(1...65535)))
            start += Int64(int(0...4000))
            return item
        }
    }

    mutating func error() -> ErrorReport {
        ErrorReport(status: StatusCode(rawValue: UInt8(int(1...255))), command: u16(), sequence: u8(), message: text(maxBytes: 200))
    }

    mutating func message() -> Message {
        switch int(0...37) {
        case 0: return .helloRequest(HelloRequest(minVersion: 1, maxVersion: UInt8(int(1...3)), attMTU: UInt16(int(23...517)), maxPayload: UInt16(int(256...2048))))
        case 1: return .helloResponse(HelloResponse(maxPayload: UInt16(int(256...2048)), maxWindow: UInt8(int(1...32)),
                                                    commands: CommandID.all.map(\.rawValue).filter { _ in bool() }))
        case 2: return .deviceInfoRequest
        case 3:
            return .deviceInfoResponse(DeviceInfoPayload(model: text(maxBytes: 32), firmware: text(maxBytes: 32), capabilities: DeviceInfoCapabilities(
                maxAlarms: int(0...255), labelMaxBytes: int(0...32), remarkMaxBytes: int(0...255),
                statisticsRule: StatisticsRule.allCases[int(0...3)], supportsNaps: bool(), deletesSyncedRecords: bool(),
                supportsLiveSleep: bool(), monitorTypes: MonitorType.allCases.filter { _ in bool() })))
        case 4: return .timeSetRequest(TimeSet(utc: u32(), utcOffset: Int32(int(-64800...64800)), zone: bool() ? nil : "Europe/Berlin"))
        case 5: return .timeSetResponse
        case 6: return .batteryRequest
        case 7: return .batteryResponse(BatteryStatus(level: UInt8(int(0...100)), state: BatteryState.allCases[int(0...3)]))
        case 8: return .alarmsGetRequest
        case 9: return .alarmsGetResponse(AlarmTable(alarms: alarms()))
        case 10: return .alarmsSetRequest(AlarmTable(alarms: alarms()))
        case 11: return .alarmsSetResponse
        case 12: return .alarmsChanged(AlarmsChanged(origin: AlarmChangeOrigin.allCases[int(0...2)], alarms: alarms()))
        case 13: return .alarmsChangedAck
        case 14: return .monitorGetRequest(MonitorRequest(type: MonitorType.allCases[int(0...5)]))
        case 15: return .monitorGetResponse(monitorConfig())
        case 16: return .monitorSetRequest(monitorConfig())
        case 17: return .monitorSetResponse
        case 18:
            let start = UInt32(int(0...2_000_000_000))
            return .sleepQueryRequest(SleepQuery(start: start, end: bool() ? nil : start + UInt32(int(1...10_000_000)), window: UInt8(int(1...32))))
        case 19: return .sleepQueryResponse(SleepTransfer(transferId: UInt16(int(1...65535)), total: UInt32(int(0...1_000_000)), recordsPerPage: UInt8(int(16...255)), window: UInt8(int(1...32))))
        case 20: return .sleepPage(SleepPage(transferId: u16(), page: u16(), last: bool(), records: records(count: int(1...255))))
        case 21: return .sleepPageAck(SleepPageAck(transferId: u16(), nextExpected: u16(), retransmit: bool()))
        case 22:
            let start = UInt32(int(0...2_000_000_000))
            return .sleepCommitRequest(SleepCommit(start: start, end: start + UInt32(int(1...10_000_000)), count: u32()))
        case 23: return .sleepCommitResponse(SleepCommitResult(deleted: u32()))
        case 24: return .sleepAbortRequest(SleepAbort(transferId: u16()))
        case 25: return .sleepAbortResponse
        case 26: return .liveSubscribeRequest(LiveSubscribe(enable: bool()))
        case 27: return .liveSubscribeResponse
        case 28: return .liveStage(LiveStageEvent(kind: LiveStageKind.allCases[int(0...2)], stage: SleepStage.allCases[int(0...3)], time: u32()))
        case 29: return .liveStageAck
        case 30: return .error(error())
        case 31: return .extensionsRequest(ExtensionsRequest(wanted: ExtensionFeatures(rawValue: u8())))
        case 32:
            let enabled = ExtensionFeatures(rawValue: UInt8(int(0...3)))
            return .extensionsResponse(ExtensionsResponse(enabled: enabled, maxSmartWindow: enabled.contains(.smartWindows) ? UInt8(int(1...255)) : 0))
        case 33: return .ringRequest(RingRequest(slot: u8(), reason: RingReason.allCases[int(0...1)]))
        case 34: return .ringResponse(RingResponse(result: RingResult.allCases[int(0...2)]))
        case 35:
            let kind = AlarmAlertKind.allCases[int(0...3)]
            return .alarmAlert(AlarmAlert(kind: kind, slot: u8(), trigger: AlarmAlertTrigger.allCases[int(0...4)], time: u32(),
                                          snoozeMinutes: kind == .snoozed ? UInt8(int(1...255)) : 0))
        case 36: return .alarmAlertAck
        default: return .nack(error())
        }
    }
}
