import TSDevice
import TSFamilyKit
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSTransport

extension WatchFamily {
    /// Protocol v1 and v1.1, this project's own protocol; its simulated watch serves the standard services beside it.
    public static let protocolV1 = WatchFamily(dialect: .protocolV1, simulated: SimulatedFamily { options in
        try SimulatedProtocolV1Watch.open(options, speaksProtocolV1: options.servesProtocolV1)
    }, peripheral: .protocolV1)

    /// The Bluetooth SIG's standard services only: protocol v1's simulated watch without its own service.
    public static let standardServices = WatchFamily(dialect: .standardServices, simulated: SimulatedFamily { options in
        try SimulatedProtocolV1Watch.open(options, speaksProtocolV1: false)
    })
}

extension SimulatedWatchOptions {
    /// The dialect a simulated watch speaks when none is asked for: a band with the standard
    /// services only (`protocol-v1: false`) speaks `standard`, any other protocol v1.
    public var impliedDialect: Dialect { servesProtocolV1 ? .protocolV1 : .standard }
}

/// Protocol v1's simulated watch (`SimulatedWatch`), its standard services and its live night.
public struct SimulatedProtocolV1Watch: SimulatedDevice {
    public let watch: SimulatedWatch
    public let sleepRecords: [SleepItem]
    public let standardServices: SimulatedStandardServices?
    public let night: SimulatedNight?

    static func open(_ options: SimulatedWatchOptions, speaksProtocolV1: Bool) throws -> SimulatedLink {
        let records = options.sleepRecords
        let watch = SimulatedWatch(configuration: options.protocolVersion.configuration,
                                   state: SimulatorState(alarms: options.alarms, monitors: options.monitors, records: records))
        let standard = options.standardServices ? SimulatedStandardServices() : nil
        let transport = LoopbackTransport(peripheral: watch, mtu: try ATTMTU(247), faults: options.faults,
                                          standard: standard, hasProtocolV1: speaksProtocolV1)
        let night = SimulatedNight(simulator: watch, interval: options.liveStageInterval, standard: standard,
                                   heartRateInterval: options.heartRateInterval)
        let device = SimulatedProtocolV1Watch(watch: watch, sleepRecords: speaksProtocolV1 ? records : [], standardServices: standard, night: night)
        return SimulatedLink(transport: transport, device: device)
    }

    public func alarmTable() async -> [Alarm]? { await watch.state.alarms }
    public func monitorTable() async -> [MonitorConfig]? { await watch.state.monitors }
    public func editFirstAlarmOnWrist() async { await watch.nudgeFirstAlarmOnWatch() }
    public func keepWatchSideEdits(in journal: WatchSideEditJournal) async { await watch.keepWatchSideEdits(in: journal) }
    public func onSleepCommit(_ observer: @escaping @Sendable (AcceptedSleepCommit) -> Void) async -> Bool {
        await watch.onSleepCommit(observer)
        return true
    }
}
