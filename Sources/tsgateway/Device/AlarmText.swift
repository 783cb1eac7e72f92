import Foundation
import TSModels

/// Command-line spellings of alarm fields, and their JSON presentation.
enum AlarmText {
    /// `HH:MM` in 24-hour time.
    static func parseTime(_ text: String) throws -> (hour: UInt8, minute: UInt8) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), parts[1].count == 2 else {
            throw CLIFailure("time \"\(text)\" is not HH:MM (24-hour, e.g. 07:30)", status: .usage)
        }
        guard (0...23).contains(hour) else { throw CLIFailure("time \"\(text)\": hour \(hour) is out of range 0…23", status: .usage) }
        guard (0...59).contains(minute) else { throw CLIFailure("time \"\(text)\": minute \(minute) is out of range 0…59", status: .usage) }
        return (UInt8(hour), UInt8(minute))
    }

    static func formatTime(hour: UInt8, minute: UInt8) -> String {
        String(format: "%02d:%02d", Int(hour), Int(minute))
    }

    /// `once`, `workdays`, `weekends`, `everyday`, or days such as `mon,wed,fri`.
    static func parseRepeat(_ text: String) throws -> AlarmRepeat {
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
                throw CLIFailure("repeat \"\(text)\": \"\(name)\" is not a day; use mon,tue,wed,thu,fri,sat,sun or once, workdays, weekends, everyday", status: .usage)
            }
            days.insert(day.day)
        }
        return days
    }

    private static let fullDayNames: Set<String> = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    static func dayNames(_ days: AlarmRepeat) -> [String] {
        AlarmRepeat.days.filter { days.contains($0.day) }.map(\.name)
    }

    static func describeRepeat(_ days: AlarmRepeat) -> String {
        switch days {
        case .once: "once"
        case .everyday: "every day"
        case .workdays: "Mon–Fri"
        case .weekend: "Sat, Sun"
        default: dayNames(days).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: ", ")
        }
    }

    /// The table `alarms get` prints.
    static func table(_ alarms: [Alarm]) -> String {
        guard !alarms.isEmpty else { return "no alarms" }
        var rows = [["slot", "time", "repeat", "on", "snooze", "label", "remark"]]
        for alarm in alarms.sorted(by: { $0.slot < $1.slot }) {
            rows.append([String(alarm.slot), formatTime(hour: alarm.hour, minute: alarm.minute), describeRepeat(alarm.repeatDays),
                         alarm.isEnabled ? "yes" : "no", alarm.snoozeAllowed ? "yes" : "no", alarm.label, alarm.remark])
        }
        return TextTable.render(rows)
    }
}

/// The JSON form of an alarm in `alarms get --json` and in files for `alarms set --file`.
struct AlarmJSON: Codable, Equatable {
    var slot: UInt8?
    var time: String
    var enabled: Bool?
    var snooze: Bool?
    var repeatDays: [String]?
    var label: String?
    var remark: String?

    enum CodingKeys: String, CodingKey {
        case slot, time, enabled, snooze, repeatDays = "repeat", label, remark
    }

    init(_ alarm: Alarm) {
        slot = alarm.slot
        time = AlarmText.formatTime(hour: alarm.hour, minute: alarm.minute)
        enabled = alarm.isEnabled
        snooze = alarm.snoozeAllowed
        repeatDays = AlarmText.dayNames(alarm.repeatDays)
        label = alarm.label
        remark = alarm.remark
    }

    func alarm(defaultSlot: UInt8) throws -> Alarm {
        let (hour, minute) = try AlarmText.parseTime(time)
        let days = try AlarmText.parseRepeat((repeatDays ?? []).joined(separator: ","))
        return Alarm(slot: slot ?? defaultSlot, label: label ?? "", hour: hour, minute: minute, isEnabled: enabled ?? true,
                     snoozeAllowed: snooze ?? false, remark: remark ?? "", repeatDays: days)
    }
}

/// Left-aligned columns separated by two spaces, aligned by terminal display width.
enum TextTable {
    static func render(_ rows: [[String]]) -> String {
        let widths = rows.reduce(into: [Int]()) { widths, row in
            for (index, cell) in row.enumerated() {
                if index >= widths.count { widths.append(0) }
                widths[index] = max(widths[index], displayWidth(cell))
            }
        }
        return rows.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                line += cell
                if index < row.count - 1 { line += String(repeating: " ", count: widths[index] - displayWidth(cell) + 2) }
            }
            return line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// Columns a terminal uses for `text`: 2 for wide East Asian characters and emoji, 0 for
    /// combining marks, 1 otherwise.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { total, character in
            let scalars = character.unicodeScalars
            guard let first = scalars.first else { return total }
            if scalars.contains(where: { $0.properties.isEmojiPresentation }) || isWide(first.value) { return total + 2 }
            return total + (first.properties.generalCategory == .nonspacingMark ? 0 : 1)
        }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD: true
        default: false
        }
    }
}

/// Pretty, key-sorted JSON on standard output.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
