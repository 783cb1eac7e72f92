import Foundation

/// The spellings of alarm fields people type (CLI, MQTT commands), and their JSON presentation.
public enum AlarmText {
    /// `HH:MM` in 24-hour time.
    public static func parseTime(_ text: String) throws(AlarmTextError) -> (hour: UInt8, minute: UInt8) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), parts[1].count == 2 else {
            throw AlarmTextError("time \"\(text)\" is not HH:MM (24-hour, e.g. 07:30)")
        }
        guard (0...23).contains(hour) else { throw AlarmTextError("time \"\(text)\": hour \(hour) is out of range 0…23") }
        guard (0...59).contains(minute) else { throw AlarmTextError("time \"\(text)\": minute \(minute) is out of range 0…59") }
        return (UInt8(hour), UInt8(minute))
    }

    public static func formatTime(hour: UInt8, minute: UInt8) -> String {
        String(format: "%02d:%02d", Int(hour), Int(minute))
    }

    /// `once`, `workdays`, `weekends`, `everyday`, or days such as `mon,wed,fri`.
    public static func parseRepeat(_ text: String) throws(AlarmTextError) -> AlarmRepeat {
        switch text.lowercased() {
        case "once", "none", "": return .once
        case "workdays", "weekdays": return .workdays
        case "weekends", "weekend": return .weekend
        case "everyday", "daily", "all": return .everyday
        default: break
        }
        var days: AlarmRepeat = []
        for name in text.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let day = AlarmRepeat.days.first(where: { name == $0.name || (name.count > 3 && $0.name.hasPrefix(name.prefix(3)) && fullDayNames.contains(name)) }) else {
                throw AlarmTextError("repeat \"\(text)\": \"\(name)\" is not a day; use mon,tue,wed,thu,fri,sat,sun or once, workdays, weekends, everyday")
            }
            days.insert(day.day)
        }
        return days
    }

    private static let fullDayNames: Set<String> = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    public static func dayNames(_ days: AlarmRepeat) -> [String] {
        AlarmRepeat.days.filter { days.contains($0.day) }.map(\.name)
    }

    public static func describeRepeat(_ days: AlarmRepeat) -> String {
        switch days {
        case .once: "once"
        case .everyday: "every day"
        case .workdays: "Mon–Fri"
        case .weekend: "Sat, Sun"
        default: dayNames(days).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: ", ")
        }
    }
}

/// The JSON form of an alarm in `alarms get --json` and in files for `alarms set --file`.
public struct AlarmJSON: Codable, Sendable, Equatable {
    public var slot: UInt8?
    public var time: String
    public var enabled: Bool?
    public var snooze: Bool?
    public var repeatDays: [String]?
    public var label: String?
    public var remark: String?

    enum CodingKeys: String, CodingKey {
        case slot, time, enabled, snooze, repeatDays = "repeat", label, remark
    }

    public init(_ alarm: Alarm) {
        slot = alarm.slot
        time = AlarmText.formatTime(hour: alarm.hour, minute: alarm.minute)
        enabled = alarm.isEnabled
        snooze = alarm.snoozeAllowed
        repeatDays = AlarmText.dayNames(alarm.repeatDays)
        label = alarm.label
        remark = alarm.remark
    }

    public func alarm(defaultSlot: UInt8) throws(AlarmTextError) -> Alarm {
        let (hour, minute) = try AlarmText.parseTime(time)
        let days = try AlarmText.parseRepeat((repeatDays ?? []).joined(separator: ","))
        return Alarm(slot: slot ?? defaultSlot, label: label ?? "", hour: hour, minute: minute, isEnabled: enabled ?? true,
                     snoozeAllowed: snooze ?? false, remark: remark ?? "", repeatDays: days)
    }
}


/// A time, repeat or alarm entry that does not parse; the message says what to write instead.
public struct AlarmTextError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
