import SwiftProtobuf

/// A command of the NPK dialect: its group (`cmd`) and the command in the group (`key`).
public struct NpkCommand: Sendable, Hashable, CustomStringConvertible {
    public var cmd: UInt8
    public var key: UInt8

    public init(cmd: UInt8, key: UInt8) {
        self.cmd = cmd
        self.key = key
    }

    // Settings (group 0x02).
    public static let deviceInfo = NpkCommand(cmd: 0x02, key: 0x02)
    public static let heartRateConfigGet = NpkCommand(cmd: 0x02, key: 0x0D)
    public static let heartRateConfigSet = NpkCommand(cmd: 0x02, key: 0x0E)
    public static let stressConfigGet = NpkCommand(cmd: 0x02, key: 0x0F)
    public static let stressConfigSet = NpkCommand(cmd: 0x02, key: 0x10)
    public static let spo2ConfigGet = NpkCommand(cmd: 0x02, key: 0x11)
    public static let spo2ConfigSet = NpkCommand(cmd: 0x02, key: 0x12)
    public static let bloodPressureConfigGet = NpkCommand(cmd: 0x02, key: 0x13)
    public static let bloodPressureConfigSet = NpkCommand(cmd: 0x02, key: 0x14)
    public static let heartRateConfigChanged = NpkCommand(cmd: 0x02, key: 0x1E)
    public static let stressConfigChanged = NpkCommand(cmd: 0x02, key: 0x1F)
    public static let spo2ConfigChanged = NpkCommand(cmd: 0x02, key: 0x20)
    public static let bloodPressureConfigChanged = NpkCommand(cmd: 0x02, key: 0x21)
    public static let alarmsGet = NpkCommand(cmd: 0x02, key: 0x38)
    public static let alarmsSet = NpkCommand(cmd: 0x02, key: 0x39)
    public static let dataChanged = NpkCommand(cmd: 0x02, key: 0x48)
    // Environment (group 0x03).
    public static let bind = NpkCommand(cmd: 0x03, key: 0x01)
    public static let login = NpkCommand(cmd: 0x03, key: 0x02)
    public static let timeSet = NpkCommand(cmd: 0x03, key: 0x05)
    public static let battery = NpkCommand(cmd: 0x03, key: 0x09)
    public static let batteryChanged = NpkCommand(cmd: 0x03, key: 0x0A)
    // Data sync (group 0x05).
    public static let heartRateData = NpkCommand(cmd: 0x05, key: 0x01)
    public static let sleepData = NpkCommand(cmd: 0x05, key: 0x05)
    public static let syncStart = NpkCommand(cmd: 0x05, key: 0x21)
    public static let syncEnd = NpkCommand(cmd: 0x05, key: 0x22)
    // Files (group 0x06): only the SDK's worked example uses it here.
    public static let fileHead = NpkCommand(cmd: 0x06, key: 0x21)

    /// The commands this gateway speaks, with their payloads.
    public static let known: [NpkCommand: NpkCommandInfo] = {
        var table: [NpkCommand: NpkCommandInfo] = [:]
        func add(_ command: NpkCommand, _ name: String, toWatch: (any SwiftProtobuf.Message.Type)?,
                 fromWatch: (any SwiftProtobuf.Message.Type)?, list: Bool = false) {
            table[command] = NpkCommandInfo(name: name, toWatch: toWatch, fromWatch: fromWatch, isList: list)
        }
        add(.deviceInfo, "deviceInfo", toWatch: nil, fromWatch: TSMetaPeripheralInfo.self)
        add(.heartRateConfigGet, "heartRateConfigGet", toWatch: nil, fromWatch: TSMetaHeartRateConfig.self)
        add(.heartRateConfigSet, "heartRateConfigSet", toWatch: TSMetaHeartRateConfig.self, fromWatch: TSCommonResponse.self)
        add(.stressConfigGet, "stressConfigGet", toWatch: nil, fromWatch: TSMetaStressConfig.self)
        add(.stressConfigSet, "stressConfigSet", toWatch: TSMetaStressConfig.self, fromWatch: TSCommonResponse.self)
        add(.spo2ConfigGet, "spo2ConfigGet", toWatch: nil, fromWatch: TSMetaBloodOxygenConfig.self)
        add(.spo2ConfigSet, "spo2ConfigSet", toWatch: TSMetaBloodOxygenConfig.self, fromWatch: TSCommonResponse.self)
        add(.bloodPressureConfigGet, "bloodPressureConfigGet", toWatch: nil, fromWatch: TSMetaBloodPressureConfig.self)
        add(.bloodPressureConfigSet, "bloodPressureConfigSet", toWatch: TSMetaBloodPressureConfig.self, fromWatch: TSCommonResponse.self)
        add(.heartRateConfigChanged, "heartRateConfigChanged", toWatch: nil, fromWatch: TSMetaHeartRateConfig.self)
        add(.stressConfigChanged, "stressConfigChanged", toWatch: nil, fromWatch: TSMetaStressConfig.self)
        add(.spo2ConfigChanged, "spo2ConfigChanged", toWatch: nil, fromWatch: TSMetaBloodOxygenConfig.self)
        add(.bloodPressureConfigChanged, "bloodPressureConfigChanged", toWatch: nil, fromWatch: TSMetaBloodPressureConfig.self)
        add(.alarmsGet, "alarmsGet", toWatch: nil, fromWatch: TSMetaAlarmList.self)
        add(.alarmsSet, "alarmsSet", toWatch: TSMetaAlarmList.self, fromWatch: TSCommonResponse.self)
        add(.dataChanged, "dataChanged", toWatch: nil, fromWatch: TSMetaDataChanged.self)
        add(.bind, "bind", toWatch: TSMetaAuthParam.self, fromWatch: TSMetaAuthRespond.self)
        add(.login, "login", toWatch: TSMetaAuthParam.self, fromWatch: TSMetaAuthRespond.self)
        add(.timeSet, "timeSet", toWatch: TSMetaTimeModel.self, fromWatch: TSCommonResponse.self)
        add(.battery, "battery", toWatch: nil, fromWatch: TSMetaBatteryModel.self)
        add(.batteryChanged, "batteryChanged", toWatch: nil, fromWatch: TSMetaBatteryModel.self)
        add(.heartRateData, "heartRateData", toWatch: nil, fromWatch: TSMetaHeartRateDay.self, list: true)
        add(.sleepData, "sleepData", toWatch: nil, fromWatch: TSMetaSleepDay.self, list: true)
        add(.syncStart, "syncStart", toWatch: TSMetaSyncStartRequest.self, fromWatch: TSMetaSyncStartResponse.self)
        add(.syncEnd, "syncEnd", toWatch: nil, fromWatch: TSMetaSyncStopRequest.self)
        add(.fileHead, "fileHead", toWatch: TSMetaFileHead.self, fromWatch: nil)
        return table
    }()

    public var info: NpkCommandInfo? { Self.known[self] }

    public var description: String {
        "\(info?.name ?? "command") (\(hex2(cmd))/\(hex2(key)))"
    }
}

/// Which way a frame travels.
public enum NpkDirection: String, Sendable, Hashable, CaseIterable {
    /// Sent by the gateway (the central).
    case toWatch = "central"
    /// Sent by the watch.
    case fromWatch = "watch"
}

/// A known command's name and payloads: the message each side sends (nil: an empty payload),
/// and whether the watch sends it as list frames.
public struct NpkCommandInfo: Sendable {
    public var name: String
    public var toWatch: (any SwiftProtobuf.Message.Type)?
    public var fromWatch: (any SwiftProtobuf.Message.Type)?
    public var isList: Bool

    public func messageType(_ direction: NpkDirection) -> (any SwiftProtobuf.Message.Type)? {
        direction == .toWatch ? toWatch : fromWatch
    }
}
