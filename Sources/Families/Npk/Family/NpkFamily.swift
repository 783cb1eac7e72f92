import TSDevice
import TSFamilyKit
import TSGATT
import TSModels
import TSNpkSimulator
import TSNpkWatch
import TSSimulatedHistory
import TSTransport

extension WatchFamily {
    /// TopStep's NPK dialect: the simulated TopStep watch holds the same nights as protocol v1's
    /// for the same seed, alarms as NPK holds them and the heart rate it measured over its history.
    public static let npk = WatchFamily(dialect: .npk, simulated: SimulatedFamily { options in try SimulatedNpkDevice.open(options) },
                                       peripheral: .npk)
}

/// The simulated TopStep watch as a simulated device.
public struct SimulatedNpkDevice: SimulatedDevice {
    public let watch: SimulatedNpkWatch
    public let sleepRecords: [SleepItem]

    static func open(_ options: SimulatedWatchOptions) throws -> SimulatedLink {
        let records = options.sleepRecords
        // NPK keeps no snooze, remark or smart window.
        let alarms = options.alarms.map { alarm in
            var held = alarm
            held.snoozeAllowed = false
            held.remark = ""
            held.smartWindow = 0
            return held
        }
        var configuration = SimulatedNpkWatch.Configuration()
        configuration.timeZone = options.timeZone
        configuration.bindAnswer = options.wearer.bindAnswer
        let now = Int64(options.now.timeIntervalSince1970)
        let heartRate = HeartRateHistoryGenerator(seed: options.seed)
            .samples(start: now - Int64(options.historyDays) * 86_400, end: now, records: records)
        let watch = SimulatedNpkWatch(configuration: configuration, records: records, alarms: alarms, monitors: options.monitors,
                                      heartRate: heartRate)
        let transport = LoopbackTransport(peripheral: watch, mtu: try ATTMTU(247), faults: options.faults)
        return SimulatedLink(transport: transport, device: SimulatedNpkDevice(watch: watch, sleepRecords: records))
    }

    public func alarmTable() async -> [Alarm]? { await watch.alarms }
    public func editFirstAlarmOnWrist() async { await watch.nudgeFirstAlarmOnWrist() }
}
