import Foundation
import SwiftProtobuf
import TSDevice
import TSModels
import TSNpk

/// Clock, battery, alarms and monitor settings of an NPK watch.
extension NpkWatch {
    public func syncTime() async throws {
        try await write(.timeSet, message: NpkTime.timeModel(at: configuration.now(), in: configuration.timeZone))
    }

    public func battery() async throws -> BatteryStatus {
        try await NpkDevice.battery(from: request(.battery).payload(as: TSMetaBatteryModel.self))
    }

    public func batteryLevelChanges() async throws -> AsyncStream<UInt8> {
        guard connection != nil else { throw WatchError.notConnected }
        return batteryLevels.subscribe()
    }

    public func alarms() async throws -> [Alarm] {
        try await NpkAlarms.alarms(from: request(.alarmsGet).payload(as: TSMetaAlarmList.self))
    }

    /// Checked against the watch's limits (count, 63-byte labels, no snooze, remark or smart
    /// window) before anything is sent; the whole list replaces the watch's.
    public func setAlarms(_ alarms: [Alarm]) async throws {
        guard let info, connection != nil else { throw WatchError.notConnected }
        let list = try NpkAlarms.list(from: alarms, maxAlarms: info.capabilities.maxAlarms)
        try await write(.alarmsSet, message: list)
    }

    /// data-changed {alarms}: the table is read again and announced.
    func alarmsChangedOnWatch() async {
        guard let table = try? await alarms() else { return }
        fanOut.send(.alarmsChanged(AlarmTableChange(alarms: table, origin: .watch)))
    }

    public func monitorConfig(_ type: MonitorType) async throws -> MonitorConfig {
        try await monitorSettings(type).config()
    }

    /// Starts from the watch's current settings so what the gateway does not model stays.
    public func setMonitorConfig(_ config: MonitorConfig) async throws {
        let (command, message) = try await monitorSettings(config.type).applying(config).setRequest
        try await write(command, message: message)
    }

    private func monitorSettings(_ type: MonitorType) async throws -> NpkMonitorSettings {
        let commands = try NpkMonitorSettings.commands(for: type)
        if let info, !info.capabilities.monitorTypes.contains(type) {
            throw unsupported("a \(type.name) monitor setting (the watch does not list it among its abilities)")
        }
        return try await NpkMonitorSettings(NpkMessage(request(commands.get), from: .fromWatch))
    }
}
