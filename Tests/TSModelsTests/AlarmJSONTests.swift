import Foundation
import TSModels
import Testing

/// One JSON shape of an alarm, read in every form tsgateway has written.
@Suite("alarm JSON")
struct AlarmJSONTests {
    static let work = Alarm(slot: 0, label: "Work", hour: 7, minute: 5, isEnabled: true, snoozeAllowed: true, repeatDays: .workdays)

    @Test("an alarm encodes as time and day names, and decodes back to itself")
    func roundTrip() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(Self.work), as: UTF8.self)
        #expect(json == #"{"enabled":true,"label":"Work","remark":"","repeat":["mon","tue","wed","thu","fri"],"slot":0,"snooze":true,"time":"07:05"}"#)
        #expect(try JSONDecoder().decode(Alarm.self, from: Data(json.utf8)) == Self.work)
    }

    @Test("tsgateway 0.2's form (hour, minute, the repeat bit mask) is still read")
    func legacyForm() throws {
        let legacy = #"{"slot":0,"label":"Work","hour":7,"minute":5,"enabled":true,"snooze":true,"remark":"","repeat":31}"#
        #expect(try JSONDecoder().decode(Alarm.self, from: Data(legacy.utf8)) == Self.work)
    }

    @Test("a table from `alarms get --json` output or a bare array; a missing slot takes the position")
    func tables() throws {
        let printed = #"{"watch": "AA:BB:CC:DD:EE:FF", "alarms": [{"time": "07:05", "repeat": ["mon","tue","wed","thu","fri"], "label": "Work", "snooze": true}]}"#
        #expect(try AlarmJSON.table(from: printed.utf8) == [Self.work])
        let bare = try AlarmJSON.table(from: #"[{"time": "06:00"}, {"time": "22:30", "enabled": false}]"#.utf8)
        #expect(bare.map(\.slot) == [0, 1] && bare[1].isEnabled == false && bare[0].repeatDays == .once)
    }

    @Test("bad tables are refused with what was wrong, as input errors", arguments: [
        (#"{"alarms": "#, "not an alarm table"),
        (#"[{"time": "25:00"}]"#, "alarm 1: time \"25:00\": hour 25"),
        (#"[{"time": "07:00"}, {"time": "07:00", "repeat": ["funday"]}]"#, "alarm 2: repeat"),
        (#"[{"label": "no time"}]"#, "missing key \"time\""),
    ])
    func refused(json: String, message: String) {
        let error = #expect(throws: AlarmTextError.self) { try AlarmJSON.table(from: json.utf8) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(error?.category == .invalidInput)
    }

    @Test("an alarm without a slot is not a stored alarm")
    func storedAlarmNeedsSlot() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Alarm.self, from: Data(#"{"time": "07:00"}"#.utf8)) }
    }

    @Test("0.2's stored origin `set` is the gateway's write")
    func storedOrigins() {
        #expect(AlarmTableOrigin(stored: "set") == .gateway)
        #expect(AlarmTableOrigin(stored: "read") == .read)
        #expect(AlarmTableOrigin(stored: "nonsense") == nil)
    }
}
