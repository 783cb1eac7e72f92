import TSModels

extension MonitorConfig {
    /// What a watch reports for a type that was never configured.
    public static func factoryDefault(_ type: MonitorType) -> MonitorConfig {
        switch type {
        case .heartRate: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 10), alert: MonitorAlert(enabled: true, upper: 120, lower: 40))
        case .spo2: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 30), alert: MonitorAlert(enabled: true, upper: 100, lower: 90))
        case .bloodPressure: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: false, intervalMinutes: 60), alert: MonitorAlert(enabled: false, upper: 140, lower: 90))
        case .stress: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, intervalMinutes: 30), alert: MonitorAlert(enabled: false, upper: 80, lower: 0))
        case .temperature: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: false, intervalMinutes: 60), alert: MonitorAlert(enabled: false, upper: 380, lower: 350))
        case .sleep: MonitorConfig(type: type, schedule: MonitorSchedule(enabled: true, startMinute: 0, endMinute: 1440, intervalMinutes: 5))
        }
    }
}

extension Alarm {
    /// The alarm a new simulated watch starts with: Work, 06:45 on workdays, snooze allowed.
    public static let simulatorDefault = Alarm(slot: 0, label: "Work", hour: 6, minute: 45, snoozeAllowed: true, repeatDays: .workdays)
}
