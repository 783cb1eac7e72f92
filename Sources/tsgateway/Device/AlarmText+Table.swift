import Foundation
import TSModels

extension AlarmText {
    /// The table `alarms get` prints; the smart-wake column only when an alarm has a window.
    static func table(_ alarms: [Alarm]) -> String {
        guard !alarms.isEmpty else { return "no alarms" }
        let smart = alarms.contains { $0.smartWindow > 0 }
        var rows = [["slot", "time", "repeat", "on", "snooze"] + (smart ? ["smart"] : []) + ["label", "remark"]]
        for alarm in alarms.sorted(by: { $0.slot < $1.slot }) {
            let window = alarm.smartWindow > 0 ? "\(alarm.smartWindow) min" : "–"
            rows.append([String(alarm.slot), formatTime(hour: alarm.hour, minute: alarm.minute), describeRepeat(alarm.repeatDays),
                         alarm.isEnabled ? "yes" : "no", alarm.snoozeAllowed ? "yes" : "no"] + (smart ? [window] : []) + [alarm.label, alarm.remark])
        }
        return TextTable.render(rows)
    }
}
