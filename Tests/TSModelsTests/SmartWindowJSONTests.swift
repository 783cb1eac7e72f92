import Foundation
import TSModels
import Testing

/// Protocol v1.1's additions to the shared JSON shapes: an alarm's `smart` window and the three
/// new capabilities, with everything written before them still read.
@Suite("smart window JSON")
struct SmartWindowJSONTests {
    static let smart = Alarm(slot: 0, label: "Work", hour: 7, minute: 0, snoozeAllowed: true, repeatDays: .workdays, smartWindow: 30)

    @Test("`smart` is written when set, left out when off, and read back")
    func smartIsWrittenOnlyWhenOn() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(Self.smart), as: UTF8.self)
        #expect(json == #"{"enabled":true,"label":"Work","remark":"","repeat":["mon","tue","wed","thu","fri"],"slot":0,"smart":30,"snooze":true,"time":"07:00"}"#)
        #expect(try JSONDecoder().decode(Alarm.self, from: Data(json.utf8)) == Self.smart)
        var off = Self.smart
        off.smartWindow = 0
        #expect(!String(decoding: try encoder.encode(off), as: UTF8.self).contains("smart"))
    }

    @Test("JSON without `smart`, or with 0, is an alarm without a window")
    func missingOrZeroIsOff() throws {
        let table = try AlarmJSON.table(from: #"[{"time": "07:00"}, {"time": "08:00", "smart": 0}, {"time": "09:00", "smart": 255}]"#.utf8)
        #expect(table.map(\.smartWindow) == [0, 0, 255])
    }

    @Test("a window outside 0…255 is refused with the range", arguments: ["256", "-5"])
    func outOfRangeIsRefused(value: String) {
        let error = #expect(throws: AlarmTextError.self) { try AlarmJSON.table(from: #"[{"time": "07:00", "smart": \#(value)}]"#.utf8) }
        #expect(error?.message == "alarm 1: smart window \(value) is out of range 0…255 minutes (0 = off)")
    }

    @Test("the limits see the window: over the watch's maximum it is a problem naming the slot and the limit")
    func limitsCheckTheWindow() {
        let limits = AlarmLimits(maxAlarms: 10, labelMaxBytes: 32, remarkMaxBytes: 64, maxSmartWindow: 20)
        #expect([Self.smart].problems(limits: limits) == [.smartWindowTooLong(slot: 0, minutes: 30, limit: 20)])
        #expect(AlarmProblem.smartWindowTooLong(slot: 0, minutes: 30, limit: 20).description == "alarm in slot 0: smart window is 30 minutes, this watch's limit is 20")
        #expect([Self.smart].problems(limits: AlarmLimits(maxAlarms: 10, labelMaxBytes: 32, remarkMaxBytes: 64, maxSmartWindow: 30)).isEmpty)
    }

    @Test("capabilities written before a capability existed read as a watch without it, and round-trip")
    func capabilitiesWithoutLaterKeysDecode() throws {
        let earlier = #"{"alarms": {"maxCount": 10, "labelMaxBytes": 32, "remarkMaxBytes": 64, "snooze": true, "maxSmartWindow": 0}, "monitorTypes": ["heartRate"]}"#
        let capabilities = try JSONDecoder().decode(WatchCapabilities.self, from: Data(earlier.utf8))
        #expect(capabilities.maxAlarms == 10 && capabilities.maxSmartWindow == 0 && !capabilities.ring && !capabilities.alarmAlerts)
        #expect(capabilities.sleepSync == nil && capabilities.statisticsRule == nil && !capabilities.heartRateHistory)
        var current = capabilities
        current.alarms?.maxSmartWindow = 45
        current.ring = true
        current.statisticsRule = .withNap
        let again = try JSONDecoder().decode(WatchCapabilities.self, from: JSONEncoder().encode(current))
        #expect(again == current)
    }
}
