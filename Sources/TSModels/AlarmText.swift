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

    /// A smart-wake window in minutes, 0 (off) … 255.
    public static func checkSmartWindow(_ minutes: Int) throws(AlarmTextError) -> UInt8 {
        guard (0...Alarm.maxSmartWindow).contains(minutes) else {
            throw AlarmTextError("smart window \(minutes) is out of range 0…\(Alarm.maxSmartWindow) minutes (0 = off)")
        }
        return UInt8(minutes)
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

/// The one JSON form of an alarm, everywhere: `alarms get --json`, `alarms set --file`, the
/// daemon's GetAlarms/SetAlarms and AlarmsChanged, events, MQTT commands and the store's alarm
/// history. `{"slot": 0, "time": "07:00", "repeat": ["mon", …], "enabled": true,
/// "snooze": false, "label": "Work", "remark": "", "smart": 30}`; on input only `time` is
/// required. `smart` (the smart-wake window in minutes) is left out when off, and 0 means off.
public struct AlarmJSON: Codable, Sendable, Equatable {
    public var slot: UInt8?
    public var identifier: String?
    public var time: String
    public var enabled: Bool?
    public var snooze: Bool?
    public var repeatDays: [String]?
    public var label: String?
    public var remark: String?
    public var smart: Int?

    enum CodingKeys: String, CodingKey {
        case slot, identifier, time, enabled, snooze, repeatDays = "repeat", label, remark, smart
    }

    public init(_ alarm: Alarm) {
        slot = alarm.slot
        identifier = alarm.identifier
        time = AlarmText.formatTime(hour: alarm.hour, minute: alarm.minute)
        enabled = alarm.isEnabled
        snooze = alarm.snoozeAllowed
        repeatDays = AlarmText.dayNames(alarm.repeatDays)
        label = alarm.label
        remark = alarm.remark
        smart = alarm.smartWindow > 0 ? Int(alarm.smartWindow) : nil
    }

    public func alarm(defaultSlot: UInt8) throws(AlarmTextError) -> Alarm {
        let (hour, minute) = try AlarmText.parseTime(time)
        let days = try AlarmText.parseRepeat((repeatDays ?? []).joined(separator: ","))
        let window = try AlarmText.checkSmartWindow(smart ?? 0)
        return Alarm(slot: slot ?? defaultSlot, identifier: identifier, label: label ?? "", hour: hour, minute: minute, isEnabled: enabled ?? true,
                     snoozeAllowed: snooze ?? false, remark: remark ?? "", repeatDays: days, smartWindow: window)
    }

    /// An alarm table from JSON input: `{"alarms": [...], …}` (what `alarms get --json` prints,
    /// other keys ignored) or a bare array. An entry without `slot` takes its position.
    public static func table(from data: some Sequence<UInt8>) throws(AlarmTextError) -> [Alarm] {
        try table(from: Data(data))
    }

    public static func table(from bytes: Data) throws(AlarmTextError) -> [Alarm] {
        struct Wrapped: Decodable { var alarms: [AlarmJSON] }
        let entries: [AlarmJSON]
        if let wrapped = try? JSONDecoder().decode(Wrapped.self, from: bytes) {
            entries = wrapped.alarms
        } else {
            do {
                entries = try JSONDecoder().decode([AlarmJSON].self, from: bytes)
            } catch {
                throw AlarmTextError("not an alarm table (\(JSONErrorText.describe(error))); expected [{\"time\": \"07:00\", \"repeat\": [\"mon\"], \"label\": \"Work\"}] or {\"alarms\": [...]}")
            }
        }
        var alarms: [Alarm] = []
        for (index, entry) in entries.enumerated() {
            do { alarms.append(try entry.alarm(defaultSlot: UInt8(clamping: index))) } catch { throw AlarmTextError("alarm \(index + 1): \(error.message)") }
        }
        return alarms
    }
}

extension Alarm: Codable {
    public func encode(to encoder: any Encoder) throws {
        try AlarmJSON(self).encode(to: encoder)
    }

    public init(from decoder: any Decoder) throws {
        let entry: AlarmJSON
        do {
            entry = try AlarmJSON(from: decoder)
        } catch {
            // Alarm histories and simulated-watch files written by tsgateway 0.2 hold the older
            // field-per-property form; it is still read, never written.
            guard let legacy = try? LegacyAlarm(from: decoder) else { throw error }
            self = legacy.alarm
            return
        }
        guard let slot = entry.slot else {
            throw DecodingError.keyNotFound(AlarmJSON.CodingKeys.slot, .init(codingPath: decoder.codingPath, debugDescription: "an alarm needs its slot"))
        }
        do {
            self = try entry.alarm(defaultSlot: slot)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// tsgateway 0.2's form: hour, minute and the repeat bit mask as numbers. The protocol test
    /// vectors use it too, with `smart` (protocol v1.1) when the alarm has a smart window.
    private struct LegacyAlarm: Decodable {
        var slot: UInt8
        var identifier: String?
        var label: String
        var hour: UInt8
        var minute: UInt8
        var enabled: Bool
        var snooze: Bool
        var remark: String
        var repeatMask: UInt8
        var smart: UInt8?

        enum CodingKeys: String, CodingKey { case slot, identifier, label, hour, minute, enabled, snooze, remark, repeatMask = "repeat", smart }

        var alarm: Alarm {
            Alarm(slot: slot, identifier: identifier, label: label, hour: hour, minute: minute, isEnabled: enabled, snoozeAllowed: snooze,
                  remark: remark, repeatDays: AlarmRepeat(rawValue: repeatMask), smartWindow: smart ?? 0)
        }
    }
}

/// A time, repeat or alarm entry that does not parse; the message says what to write instead.
public struct AlarmTextError: CategorizedError, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var category: ErrorCategory { .invalidInput }
}
