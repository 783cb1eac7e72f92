import Testing
import TSGarmin
import TSModels

/// The settings FIT file that carries a Garmin watch's alarms (protocol-spec/garmin/garmin.md §10).
@Suite struct GarminAlarmFileTests {
    static let created: UInt32 = 1_164_146_000
    static let table = [
        Alarm(slot: 0, label: "wake up", hour: 6, minute: 45, repeatDays: .workdays),
        Alarm(slot: 1, label: "", hour: 9, minute: 30, isEnabled: false, repeatDays: .weekend),
        Alarm(slot: 2, label: "BEDTIME", hour: 22, minute: 0),
    ]

    @Test("a table written as a settings file reads back as the same alarms, labels by the watch's names")
    func aTableRoundTrips() throws {
        let bytes = try GarminAlarmFile.file(Self.table, created: Self.created)
        let files = try FITDecoder.decode(bytes)
        #expect(files.first?.fileType == FITFileType.settings)
        let read = try GarminAlarmFile.alarms(in: files)
        #expect(read.map(\.hour) == [6, 9, 22] && read.map(\.minute) == [45, 30, 0])
        #expect(read.map(\.repeatDays) == [.workdays, .weekend, .once])
        #expect(read.map(\.isEnabled) == [true, false, true])
        #expect(read.map(\.label) == ["wake up", "", "bedtime"])
    }

    @Test("the file's records: file_id type 2 by Garmin, one alarm_settings per alarm, device_settings' four arrays; once is 128")
    func theRecordsAreTheSourcesLayout() throws {
        let file = try #require(try FITDecoder.decode(GarminAlarmFile.file(Self.table, created: Self.created)).first)
        let id = try #require(file.messages.first { $0.global == FITGlobal.fileID })
        #expect(id.unsigned(0) == 2 && id.unsigned(1) == 1 && id.unsigned(2) == 65534 && id.unsigned(4) == UInt64(Self.created))
        let alarms = file.messages.filter { $0.global == FITGlobal.alarmSettings }
        #expect(alarms.map { $0.unsigned(0) } == [405, 570, 1320], "minutes after midnight")
        #expect(alarms.map { $0.unsigned(1) } == [0x1F, 0x60, 128], "Monday is bit 0; an alarm that rings once is 128")
        #expect(alarms.map { $0.unsigned(8) } == [1, 0, 8], "wake up, none, bedtime")
        #expect(alarms.map { $0.unsigned(254) } == [0, 1, 2])
        let settings = try #require(file.messages.first { $0.global == FITGlobal.deviceSettings })
        #expect(settings.fields[8] == .array([.unsigned(405), .unsigned(570), .unsigned(1320)]))
        #expect(settings.fields[9] == .array([.unsigned(5), .unsigned(5), .unsigned(5)]))
        #expect(settings.fields[28] == .array([.unsigned(1), .unsigned(0), .unsigned(1)]))
        #expect(settings.fields[92] == .array([.unsigned(0x1F), .unsigned(0x60), .unsigned(128)]))
    }

    @Test("no alarms: the file clears them (file_id only)")
    func anEmptyTableClears() throws {
        let files = try FITDecoder.decode(GarminAlarmFile.file([], created: Self.created))
        #expect(try GarminAlarmFile.alarms(in: files).isEmpty)
        #expect(files.first?.messages.map(\.global) == [FITGlobal.fileID])
    }

    @Test("what the watch cannot hold is refused, saying what to change")
    func whatItCannotHoldIsRefused() {
        func refusal(_ alarms: [Alarm]) -> String {
            do {
                _ = try GarminAlarmFile.file(alarms, created: Self.created)
                return "accepted"
            } catch { return "\((error as? GarminError)?.code.rawValue ?? "?"): \(error)" }
        }
        #expect(refusal([Alarm(slot: 0, label: "Gym", hour: 7, minute: 0)]).contains("one of its own labels"))
        #expect(refusal([Alarm(slot: 0, hour: 7, minute: 0, snoozeAllowed: true)]).contains("no snooze"))
        #expect(refusal((0...10).map { Alarm(slot: UInt8($0), hour: 7, minute: 0) }).hasPrefix("alarmNotSettable"))
        #expect(refusal([Alarm(slot: 0, hour: 7, minute: 0, smartWindow: 10)]).hasPrefix("alarmNotSettable"))
    }

    @Test("a file that is not a settings file is not read as alarms")
    func anotherFileIsNotAlarms() throws {
        let sleep = try FITDecoder.decode(FITRecords.sleepFile([SleepItem(stage: .light, start: 1_795_211_200, duration: 600)], created: 1_795_211_200))
        #expect { try GarminAlarmFile.alarms(in: sleep) } throws: { ($0 as? GarminError)?.code == .settingsFileInvalid }
    }
}
