import Foundation
import TSModels

/// The 16-byte requests the gateway sends (protocol-spec/qring/qring.md §3).
public enum QRingRequest {
    /// Sets the ring's clock to the wall-clock time `wall`; language byte 1 (English).
    public static func setTime(_ wall: RingDateTime) throws(QRingError) -> QRingPacket {
        let date = wall.date
        guard (2000...2099).contains(date.year) else {
            throw QRingError(.yearOutOfRange, "the ring's clock holds years 2000…2099, not \(date.year)")
        }
        return QRingPacket(command: QRingCommand.setTime, data: [
            bcd(date.year - 2000), bcd(date.month), bcd(date.day),
            bcd(wall.hour), bcd(wall.minute), bcd(wall.second), 1,
        ])
    }

    /// Sets the ring's clock to the local time of `instant` in `zone` (the project's time base).
    public static func setTime(at instant: Date, in zone: TimeZone) throws(QRingError) -> QRingPacket {
        try setTime(RingDateTime(instant, in: zone))
    }

    public static let battery = QRingPacket(command: QRingCommand.battery)

    public static let heartRateLogSettingsRead = QRingPacket(command: QRingCommand.heartRateLogSettings, data: [QRingCommand.settingRead])

    /// Heart-rate logging on or off, every `intervalMinutes` (5, 10, … 60).
    public static func heartRateLogSettingsWrite(enabled: Bool, intervalMinutes: Int) throws(QRingError) -> QRingPacket {
        guard (5...60).contains(intervalMinutes), intervalMinutes % 5 == 0 else {
            throw QRingError(.intervalOutOfRange, "the ring logs heart rate every 5, 10, … 60 minutes, not every \(intervalMinutes)")
        }
        return QRingPacket(command: QRingCommand.heartRateLogSettings,
                           data: [QRingCommand.settingWrite, enabled ? 1 : 2, UInt8(intervalMinutes)])
    }

    /// The heart-rate monitor config as the ring takes it: all day, no alerts.
    public static func heartRateLogSettingsWrite(_ config: MonitorConfig) throws(QRingError) -> QRingPacket {
        guard config.type == .heartRate else {
            throw QRingError(.windowNotSupported, "the ring's heart-rate log takes a heart-rate config, not \(config.type.name)")
        }
        guard config.schedule.startMinute == 0, config.schedule.endMinute == 1440 else {
            throw QRingError(.windowNotSupported, "the ring logs heart rate all day; set the window to 00:00–24:00")
        }
        guard !config.alert.enabled else {
            throw QRingError(.windowNotSupported, "the ring has no heart-rate alerts; switch the alert off")
        }
        return try heartRateLogSettingsWrite(enabled: config.schedule.enabled, intervalMinutes: Int(config.schedule.intervalMinutes))
    }

    public static func switchRead(_ monitor: SwitchedMonitor) -> QRingPacket {
        QRingPacket(command: QRingCommand.switchCommand(for: monitor), data: [QRingCommand.settingRead])
    }

    public static func switchWrite(_ monitor: SwitchedMonitor, enabled: Bool) -> QRingPacket {
        QRingPacket(command: QRingCommand.switchCommand(for: monitor), data: [QRingCommand.settingWrite, enabled ? 1 : 0])
    }

    /// The heart-rate log of `day`: its midnight on the ring's clock, u32 little-endian.
    public static func heartRateLog(day: RingDate) -> QRingPacket {
        let stamp = UInt32(truncatingIfNeeded: day.wallSeconds)
        return QRingPacket(command: QRingCommand.heartRateLog, data: (0..<4).map { UInt8(truncatingIfNeeded: stamp >> (8 * $0)) })
    }

    /// Starts real-time heart rate (type 1) in the form colmi-r02-client 0.1.0 and Gadgetbridge send.
    public static let realTimeStart = QRingPacket(command: QRingCommand.realTimeStart, data: [1, 0])
    /// Keeps a real-time measurement going (colmi-r02-client 0.1.0).
    public static let realTimeContinue = QRingPacket(command: QRingCommand.realTimeContinue, data: [0x33])
    public static let realTimeStop = QRingPacket(command: QRingCommand.realTimeStop, data: [1, 0, 0])

    /// Steps of the day `daysAgo` days before the ring's today.
    public static func steps(daysAgo: UInt8) -> QRingPacket {
        QRingPacket(command: QRingCommand.steps, data: [daysAgo, 0x0F, 0x00, 0x5F, 0x01])
    }
}
