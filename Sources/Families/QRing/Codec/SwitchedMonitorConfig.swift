import TSModels

/// The all-day switches of SpO2 and stress as the project's monitor configs
/// (protocol-spec/qring/qring.md §3): on or off, all day, no alert. HRV has no `MonitorType`; it is
/// read and written as a `SwitchedMonitor` only.
public enum SwitchedMonitorConfig {
    /// A switch has no interval the gateway can set: the ring decides when it measures, and no
    /// source says how often. Configs show this value and take no other.
    public static let intervalMinutes: UInt16 = 60

    /// The switch behind a monitor type, if the ring has one.
    public static func monitor(for type: MonitorType) -> SwitchedMonitor? {
        SwitchedMonitor.allCases.first { $0.monitorType == type }
    }

    public static func config(_ monitor: SwitchedMonitor, enabled: Bool) -> MonitorConfig? {
        monitor.monitorType.map {
            MonitorConfig(type: $0, schedule: MonitorSchedule(enabled: enabled, startMinute: 0, endMinute: 1440, intervalMinutes: intervalMinutes))
        }
    }

    /// The switch write for `config`, refused before anything is sent when it asks for what a
    /// switch cannot hold.
    public static func write(_ config: MonitorConfig) throws(QRingError) -> QRingPacket {
        guard let monitor = monitor(for: config.type) else {
            throw QRingError(.windowNotSupported, "the ring has no \(config.type.name) setting; it has heart rate, spo2 and stress")
        }
        guard config.schedule.startMinute == 0, config.schedule.endMinute == 1440 else {
            throw QRingError(.windowNotSupported, "the ring measures \(config.type.name) all day once switched on; set the window to 00:00–24:00")
        }
        guard config.schedule.intervalMinutes == intervalMinutes else {
            throw QRingError(.windowNotSupported, "the ring decides how often it measures \(config.type.name); only --enable and --disable can be set")
        }
        guard !config.alert.enabled else {
            throw QRingError(.windowNotSupported, "the ring has no \(config.type.name) alerts; switch the alert off")
        }
        return QRingRequest.switchWrite(monitor, enabled: config.schedule.enabled)
    }
}
