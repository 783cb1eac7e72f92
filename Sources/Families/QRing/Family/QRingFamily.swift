import TSDevice
import TSFamilyKit
import TSGATT
import TSModels
import TSQRingSimulator
import TSQRingWatch
import TSTransport

extension WatchFamily {
    /// QRing smart rings: the simulated ring stages its own nights and keeps a heart-rate log from the same seed; it has no alarms.
    public static let qring = WatchFamily(dialect: .qring, simulated: SimulatedFamily { options in try SimulatedQRingDevice.open(options) },
                                         peripheral: .qring)
}

/// The simulated ring as a simulated device.
public struct SimulatedQRingDevice: SimulatedDevice {
    public let ring: SimulatedRing
    public let sleepRecords: [SleepItem]

    static func open(_ options: SimulatedWatchOptions) throws -> SimulatedLink {
        let history = RingHistory(seed: options.seed, timeZone: options.timeZone, now: options.now, days: options.historyDays)
        let ring = SimulatedRing(history: history, monitors: options.monitors)
        let transport = LoopbackTransport(peripheral: ring, mtu: try ATTMTU(247), faults: options.faults,
                                          standard: ring, name: ring.configuration.name, secondChannel: ring)
        let device = SimulatedQRingDevice(ring: ring, sleepRecords: history.nights.flatMap(\.items))
        return SimulatedLink(transport: transport, device: device)
    }

    /// A ring has no alarms: the simulated watch's remembered ones stay as they were.
    public func alarmTable() async -> [Alarm]? { nil }
    public func editFirstAlarmOnWrist() async {}
}
