import Foundation
import Testing
import TSGATT
import TSModels
@testable import TSProtocol

/// Protocol v1.1 in the codec: a record without a smart window is byte for byte a version-1
/// record; the SMART byte, EXTENSIONS' feature names and RING/ALARM_ALERT bodies round-trip.
@Suite struct SmartWakeCodecTests {
    static let work = Alarm(slot: 0, label: "Work", hour: 7, minute: 0, snoozeAllowed: true, remark: "", repeatDays: .workdays)

    @Test func anAlarmWithoutAWindowIsAVersionOneRecord() throws {
        let payload = try AlarmTable(alarms: [Self.work]).encodedPayload()
        // count, slot, flags (enabled|snooze), hour, minute, repeat, label "Work", empty remark
        #expect(payload == [1, 0, 0x03, 7, 0, 0x1F, 4] + Array("Work".utf8) + [0])
    }

    @Test func aWindowSetsSMARTAndFollowsTheRemark() throws {
        var smart = Self.work
        smart.smartWindow = 30
        let payload = try AlarmTable(alarms: [smart]).encodedPayload()
        #expect(payload == [1, 0, 0x07, 7, 0, 0x1F, 4] + Array("Work".utf8) + [0, 30])
        #expect(try AlarmTable(payload: payload, name: "table").alarms == [smart])
    }

    @Test func extensionFeaturesKeepBitsOfLaterVersions() throws {
        let request = Message.extensionsRequest(ExtensionsRequest(wanted: ExtensionFeatures(rawValue: 0b1000_0011)))
        let json = try JSONEncoder().encode(request)
        #expect(String(decoding: json, as: UTF8.self).contains(#"["smartWindows","alarmAlerts","bit7"]"#))
        #expect(try JSONDecoder().decode(Message.self, from: json) == request)
        #expect(try Message(frame: Frame.decode(request.frame(sequence: 4).encoded())) == request)
    }

    @Test func nothingInvalidIsEncoded() {
        #expect(throws: ProtocolError.self) { try ExtensionsResponse(enabled: [.alarmAlerts], maxSmartWindow: 30).encodedPayload() }
        #expect(throws: ProtocolError.self) { try ExtensionsResponse(enabled: [.smartWindows], maxSmartWindow: 0).encodedPayload() }
        #expect(throws: ProtocolError.self) { try AlarmAlert(kind: .snoozed, slot: 0, trigger: .alarmTime, time: 0).encodedPayload() }
        #expect(throws: ProtocolError.self) { try AlarmAlert(kind: .dismissed, slot: 0, trigger: .alarmTime, time: 0, snoozeMinutes: 9).encodedPayload() }
    }

    @Test func everyVersionOnePointOneCommandHasAName() {
        #expect(CommandID.all.count == 20)
        #expect(Set(CommandID.addedInVersion1_1.map(\.rawValue)) == [0x0100, 0x0101, 0x0102])
        #expect(Message.allKinds.filter { ["extensions", "ring", "alarmAlert"].contains($0.split(separator: ".").first.map(String.init)) }.count == 6)
    }
}
