import TSModels

/// A ring's battery as it reports it.
public struct RingBattery: Sendable, Hashable {
    /// Percent, 0…100.
    public var level: Int
    public var charging: Bool

    public init(level: Int, charging: Bool) {
        self.level = level
        self.charging = charging
    }
}

/// What a ring says it has new data for (notice `0x73`).
public enum RingDataKind: String, Sendable, Hashable {
    case heartRate, spo2, steps
}

/// A self-contained answer from the ring: one packet. The heart-rate log and steps span several
/// packets: `HeartRateLogAssembler`, `StepsAssembler`.
public enum QRingAnswer: Sendable, Hashable {
    /// The clock was set; the ring speaks the "new sleep protocol" (big-data sleep) when true.
    case timeSet(newSleepProtocol: Bool)
    case battery(RingBattery)
    /// Battery the ring sent on its own (notice `0x73 0x0C`).
    case batteryPushed(RingBattery)
    case newData(RingDataKind)
    /// A notice this dialect does not read.
    case notice(code: UInt8)
    /// The heart-rate log settings as the project's monitor config: all day, no alert.
    case heartRateLogSettings(MonitorConfig)
    case heartRateLogSettingsWritten
    case monitorSwitch(SwitchedMonitor, enabled: Bool)
    case monitorSwitchWritten(SwitchedMonitor)
    /// A real-time heart-rate reading; 0 while the ring has none yet.
    case realTimeHeartRate(bpm: Int)
    /// The ring could not measure: 1 worn incorrectly, 2 temporarily no data (Gadgetbridge).
    case realTimeError(code: UInt8)
    /// A real-time reading of a type other than heart rate.
    case realTimeOther(type: UInt8)
    case realTimeStopped

    public init(packet bytes: some Collection<UInt8>) throws(QRingError) {
        let packet = try QRingPacket(bytes: bytes)
        let data = packet.data
        switch packet.command {
        case QRingCommand.setTime:
            self = .timeSet(newSleepProtocol: data[8] != 0)
        case QRingCommand.battery:
            self = .battery(try Self.battery(level: data[0], charging: data[1]))
        case QRingCommand.notice:
            switch data[0] {
            case 0x0C: self = .batteryPushed(try Self.battery(level: data[1], charging: data[2]))
            case 0x01: self = .newData(.heartRate)
            case 0x03: self = .newData(.spo2)
            case 0x04: self = .newData(.steps)
            default: self = .notice(code: data[0])
            }
        case QRingCommand.heartRateLogSettings:
            switch data[0] {
            case QRingCommand.settingWrite:
                self = .heartRateLogSettingsWritten
            case QRingCommand.settingRead:
                let enabled = try Self.flag(data[1], on: 1, off: 2, "heart-rate log enabled")
                guard data[2] > 0 else { throw QRingError(.valueOutOfRange, "the ring reports a heart-rate log interval of 0 minutes") }
                self = .heartRateLogSettings(MonitorConfig(
                    type: .heartRate, schedule: MonitorSchedule(enabled: enabled, startMinute: 0, endMinute: 1440, intervalMinutes: UInt16(data[2]))))
            default:
                throw QRingError(.invalidValue, "heart-rate log settings answer kind \(data[0]) is neither 1 (read) nor 2 (write)")
            }
        case QRingCommand.realTimeStart:
            if data[0] != 1 {
                self = .realTimeOther(type: data[0])
            } else if data[1] != 0 {
                self = .realTimeError(code: data[1])
            } else {
                self = .realTimeHeartRate(bpm: Int(data[2]))
            }
        case QRingCommand.realTimeStop:
            self = .realTimeStopped
        case let command:
            guard let monitor = QRingCommand.switchedMonitor(command: command) else {
                throw QRingError(.unexpectedCommand, "command \(hex(command)) is not an answer this dialect reads")
            }
            switch data[0] {
            case QRingCommand.settingWrite:
                self = .monitorSwitchWritten(monitor)
            case QRingCommand.settingRead:
                self = .monitorSwitch(monitor, enabled: try Self.flag(data[1], on: 1, off: 0, "\(monitor.rawValue) switch"))
            default:
                throw QRingError(.invalidValue, "\(monitor.rawValue) switch answer kind \(data[0]) is neither 1 (read) nor 2 (write)")
            }
        }
    }

    static func battery(level: UInt8, charging: UInt8) throws(QRingError) -> RingBattery {
        guard level <= 100 else { throw QRingError(.valueOutOfRange, "the ring reports a battery level of \(level) %") }
        return RingBattery(level: Int(level), charging: try flag(charging, on: 1, off: 0, "battery charging"))
    }

    static func flag(_ byte: UInt8, on: UInt8, off: UInt8, _ what: String) throws(QRingError) -> Bool {
        if byte == on { return true }
        if byte == off { return false }
        throw QRingError(.invalidValue, "\(what) byte is \(byte), neither \(on) (on) nor \(off) (off)")
    }
}
