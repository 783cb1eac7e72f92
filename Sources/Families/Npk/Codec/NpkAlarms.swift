import TSModels

/// The watch's alarm list ↔ the gateway's alarms. An NPK alarm has an id, on/off, a time, the
/// days (bit 0 Monday … bit 6 Sunday) and a label of at most 63 bytes; no snooze, remark or
/// smart window.
public enum NpkAlarms {
    public static let maxLabelBytes = 63

    /// The limits an alarm table for a watch that holds `maxAlarms` alarms must fit.
    public static func limits(maxAlarms: Int) -> AlarmLimits {
        AlarmLimits(maxAlarms: maxAlarms, labelMaxBytes: maxLabelBytes, remarkMaxBytes: 0, maxSmartWindow: 0)
    }

    /// The watch's list as alarms; an item the gateway cannot hold is an error naming it.
    public static func alarms(from list: TSMetaAlarmList) throws -> [Alarm] {
        try list.items.map(alarm(from:))
    }

    public static func alarm(from item: TSMetaAlarmItem) throws -> Alarm {
        guard let slot = UInt8(exactly: item.id) else {
            throw NpkError(.alarmIdOutOfRange, "alarm id \(item.id) from the watch is outside 0…255")
        }
        guard (0...23).contains(item.hour) else {
            throw NpkError(.hourOutOfRange, "alarm \(item.id) from the watch: hour \(item.hour) is outside 0…23")
        }
        guard (0...59).contains(item.minute) else {
            throw NpkError(.minuteOutOfRange, "alarm \(item.id) from the watch: minute \(item.minute) is outside 0…59")
        }
        guard (0...0x7F).contains(item.repeat) else {
            throw NpkError(.repeatOutOfRange, "alarm \(item.id) from the watch: repeat mask 0x\(String(item.repeat, radix: 16)) uses bits beyond Monday (bit 0) … Sunday (bit 6)")
        }
        let labelBytes = item.label.utf8.count
        guard labelBytes <= maxLabelBytes else {
            throw NpkError(.labelTooLong, "alarm \(item.id) from the watch: label is \(labelBytes) bytes of UTF-8, the dialect holds \(maxLabelBytes)")
        }
        return Alarm(slot: slot, label: item.label, hour: UInt8(item.hour), minute: UInt8(item.minute), isEnabled: item.isEnabled,
                     repeatDays: AlarmRepeat(rawValue: UInt8(item.repeat)))
    }

    /// The list to set on a watch that holds `maxAlarms` alarms. Errors say what to change:
    /// too many alarms, a slot used twice, a label over 63 bytes (invalid input); snooze, a
    /// remark or a smart window (not supported by the dialect).
    public static func list(from alarms: [Alarm], maxAlarms: Int) throws -> TSMetaAlarmList {
        guard alarms.count <= maxAlarms else {
            throw NpkError(.tooManyAlarms, "\(alarms.count) alarms given, but this watch holds at most \(maxAlarms)")
        }
        var seen = Set<UInt8>()
        for alarm in alarms where !seen.insert(alarm.slot).inserted {
            throw NpkError(.duplicateAlarmId, "slot \(alarm.slot) is used by more than one alarm")
        }
        var list = TSMetaAlarmList()
        list.items = try alarms.map(item(from:))
        return list
    }

    public static func item(from alarm: Alarm) throws -> TSMetaAlarmItem {
        if alarm.snoozeAllowed {
            throw NpkError(.notSupported, "alarm in slot \(alarm.slot): this watch's alarms have no snooze; set the alarm without it")
        }
        if !alarm.remark.isEmpty {
            throw NpkError(.notSupported, "alarm in slot \(alarm.slot): this watch's alarms have no remark; set the alarm without it")
        }
        if alarm.smartWindow != 0 {
            throw NpkError(.notSupported, "alarm in slot \(alarm.slot): this watch's alarms have no smart wake window; set the alarm without it")
        }
        let labelBytes = alarm.label.utf8.count
        if labelBytes > maxLabelBytes {
            throw NpkError(.labelTooLong, "alarm in slot \(alarm.slot): label is \(labelBytes) bytes of UTF-8, this watch holds at most \(maxLabelBytes); shorten it",
                           category: .invalidInput)
        }
        if alarm.hour > 23 || alarm.minute > 59 {
            throw NpkError(alarm.hour > 23 ? .hourOutOfRange : .minuteOutOfRange,
                           "alarm in slot \(alarm.slot): \(alarm.hour):\(alarm.minute) is not a time of day", category: .invalidInput)
        }
        if !alarm.repeatDays.isValid {
            throw NpkError(.repeatOutOfRange, "alarm in slot \(alarm.slot): repeat mask uses bit 7 (Monday = bit 0 … Sunday = bit 6)", category: .invalidInput)
        }
        var item = TSMetaAlarmItem()
        item.id = Int32(alarm.slot)
        item.isEnabled = alarm.isEnabled
        item.hour = Int32(alarm.hour)
        item.minute = Int32(alarm.minute)
        item.repeat = Int32(alarm.repeatDays.rawValue)
        item.label = alarm.label
        return item
    }
}
