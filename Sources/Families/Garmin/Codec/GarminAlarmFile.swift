import Foundation
import TSModels

/// A Garmin watch's alarms as the settings FIT file that carries them (protocol-spec/garmin/garmin.md
/// §10): file_id (type 2, manufacturer 1, product 65534), one alarm_settings (222) per alarm, and
/// one device_settings (2) whose arrays repeat each alarm's time, mode, switch and days. The
/// watch has no free-text label: a label is one of `labels`, by name.
public enum GarminAlarmFile {
    /// The most alarms a settings file sets (Gadgetbridge offers ten).
    public static let maxAlarms = 10
    /// The labels a watch shows, by their number in field 8 (0: none).
    public static let labels = ["", "wake up", "workout", "reminder", "appointment", "training", "class", "meditate", "bedtime"]
    /// The longest label name, in bytes: what `WatchCapabilities.Alarms.labelMaxBytes` says.
    public static let labelMaxBytes = labels.map(\.utf8.count).max() ?? 0
    /// The limits a table must fit: no remark, no smart window.
    public static let limits = AlarmLimits(maxAlarms: maxAlarms, labelMaxBytes: labelMaxBytes, remarkMaxBytes: 0, maxSmartWindow: 0)

    /// alarm_settings fields.
    enum Field {
        static let time: UInt8 = 0, days: UInt8 = 1, enabled: UInt8 = 2, sound: UInt8 = 3, backlight: UInt8 = 4
        static let created: UInt8 = 5, unknown7: UInt8 = 7, label: UInt8 = 8, index: UInt8 = 254
    }

    /// device_settings' alarm arrays.
    enum SettingsField {
        static let times: UInt8 = 8, modes: UInt8 = 9, enabled: UInt8 = 28, days: UInt8 = 92
    }

    /// Field 1 of an alarm that rings once (no day bit).
    static let once: UInt64 = 128
    /// Tone and vibration (field 3: 0 off, 1 tone, 2 vibration, 3 both).
    static let toneAndVibration: UInt64 = 3

    /// The label's number: "" is none; a name of `labels`, in any case, with `_` or `-` for a space.
    public static func labelNumber(_ label: String) -> Int? {
        let name = label.lowercased().replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: "-", with: " ")
            .trimmingCharacters(in: .whitespaces)
        return labels.firstIndex(of: name)
    }

    /// The settings file for `alarms`, made at `created` (Garmin seconds). A table the watch cannot
    /// hold is refused naming the alarm and what to change.
    public static func file(_ alarms: [Alarm], created: UInt32) throws(GarminError) -> [UInt8] {
        if let problem = alarms.problems(limits: limits).first {
            throw GarminError(.alarmNotSettable, "\(problem)")
        }
        for alarm in alarms {
            if alarm.snoozeAllowed {
                throw GarminError(.alarmNotSettable, "alarm in slot \(alarm.slot): a Garmin watch's alarm settings have no snooze; set the alarm without --snooze")
            }
            if labelNumber(alarm.label) == nil {
                throw GarminError(.alarmNotSettable, "alarm in slot \(alarm.slot): a Garmin watch shows one of its own labels, not \"\(alarm.label)\"; "
                    + "use one of \(labels.dropFirst().map { "\"\($0)\"" }.joined(separator: ", ")) or none")
            }
        }
        var encoder = FITEncoder()
        try encoder.write(global: FITGlobal.fileID, [
            .init(0, .enumeration, .unsigned(FITFileType.settings)), .init(1, .uint16, .unsigned(1)), .init(2, .uint16, .unsigned(65534)),
            .init(3, .uint32z, .unsigned(1)), .init(4, .uint32, .unsigned(UInt64(created))), .init(5, .uint16, .unsigned(1)),
        ])
        let ordered = alarms.sorted { $0.slot < $1.slot }
        for (index, alarm) in ordered.enumerated() {
            try encoder.write(global: FITGlobal.alarmSettings, [
                .init(Field.time, .uint16, .unsigned(minutes(alarm))),
                .init(Field.days, .uint32z, .unsigned(days(alarm))),
                .init(Field.enabled, .enumeration, .unsigned(alarm.isEnabled ? 1 : 0)),
                .init(Field.sound, .enumeration, .unsigned(toneAndVibration)),
                .init(Field.backlight, .enumeration, .unsigned(1)),
                .init(Field.created, .uint32, .unsigned(UInt64(created))),
                .init(Field.unknown7, .uint8, .unsigned(0)),
                .init(Field.label, .enumeration, .unsigned(UInt64(labelNumber(alarm.label) ?? 0))),
                .init(Field.index, .uint16, .unsigned(UInt64(index))),
            ])
        }
        if !ordered.isEmpty {
            try encoder.write(global: FITGlobal.deviceSettings, [
                .init(SettingsField.times, .uint16, .array(ordered.map { .unsigned(minutes($0)) })),
                .init(SettingsField.modes, .enumeration, .array(ordered.map { _ in .unsigned(5) })),
                .init(SettingsField.enabled, .enumeration, .array(ordered.map { .unsigned($0.isEnabled ? 1 : 0) })),
                .init(SettingsField.days, .uint32z, .array(ordered.map { .unsigned(days($0)) })),
            ])
        }
        return encoder.file()
    }

    /// The alarms a settings file carries, in its order, each in the slot of its index (the
    /// simulated watch reads what it was sent). A file that is not a settings file, or an alarm
    /// without a time, is refused.
    public static func alarms(in files: [FITFile]) throws(GarminError) -> [Alarm] {
        guard let file = files.first, file.fileType == FITFileType.settings else {
            throw GarminError(.settingsFileInvalid, "not a settings file (file_id type \(files.first?.fileType.map(String.init) ?? "missing"), 2 expected)")
        }
        var alarms: [Alarm] = []
        for message in file.messages where message.global == FITGlobal.alarmSettings {
            guard let time = message.unsigned(Field.time), time < 24 * 60 else {
                throw GarminError(.settingsFileInvalid, "an alarm_settings record without a time of day in minutes (0…1439)")
            }
            let days = message.unsigned(Field.days) ?? once
            let label = message.unsigned(Field.label).flatMap { Int(exactly: $0) }.flatMap { labels.indices.contains($0) ? labels[$0] : nil } ?? ""
            alarms.append(Alarm(slot: UInt8(clamping: message.unsigned(Field.index) ?? UInt64(alarms.count)), label: label,
                                hour: UInt8(time / 60), minute: UInt8(time % 60), isEnabled: message.unsigned(Field.enabled) == 1,
                                repeatDays: days & once != 0 ? .once : AlarmRepeat(rawValue: UInt8(truncatingIfNeeded: days & 0x7F))))
        }
        return alarms
    }

    static func minutes(_ alarm: Alarm) -> UInt64 { UInt64(alarm.hour) * 60 + UInt64(alarm.minute) }
    static func days(_ alarm: Alarm) -> UInt64 { alarm.repeatDays == .once ? once : UInt64(alarm.repeatDays.rawValue) }
}
