import TSDevice
import TSFamilyKit
import TSGATT
import TSGarmin
import TSGarminSimulator
import TSGarminWatch
import TSModels
import TSTransport

extension WatchFamily {
    /// Garmin watches: the simulated watch serves its nights and heart rate as FIT files; it has no alarms to read back.
    public static let garmin = WatchFamily(dialect: .garmin, simulated: SimulatedFamily { options in try SimulatedGarminDevice.open(options) },
                                           peripheral: .garmin)
}

/// The simulated Garmin watch as a simulated device.
public struct SimulatedGarminDevice: SimulatedDevice {
    public let watch: SimulatedGarminWatch
    public var sleepRecords: [SleepItem] { watch.history.sleepItems }

    static func open(_ options: SimulatedWatchOptions) throws -> SimulatedLink {
        let history = try GarminWatchHistory(seed: options.seed, timeZone: options.timeZone, now: options.now, days: options.historyDays)
        let watch = SimulatedGarminWatch(history: history)
        let transport = LoopbackTransport(peripheral: watch, mtu: try ATTMTU(247), faults: options.faults,
                                          name: watch.configuration.deviceInformation.bluetoothName, writeMode: GATTProfile.garmin.writeMode)
        return SimulatedLink(transport: transport, device: SimulatedGarminDevice(watch: watch))
    }

    /// The alarms of the last settings file it took (protocol-spec/garmin/garmin.md §10); nil before
    /// any: the simulated watch's remembered ones stay as they were.
    public func alarmTable() async -> [Alarm]? { await watch.alarms }
    public func editFirstAlarmOnWrist() async {}
}
