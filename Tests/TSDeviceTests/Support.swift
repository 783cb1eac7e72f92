import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSTransport

/// A simulated watch with `days` of generated nights and a central over a loopback link.
struct Rig {
    let simulator: SimulatedWatch
    let watch: Watch
    let groundTruth: [SleepItem]

    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// A fixed "now" so runs (and captures) are reproducible: 2025-11-03 08:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_762_156_800)

    /// `speaksVersion1_1` false: the simulated watch is a version-1 watch; `centralExtensions`
    /// empty: the central behaves as a version-1 central.
    init(days: Int = 7, capabilities: DeviceInfoCapabilities = .simulatorDefault, faults: FaultInjection = .none,
         mtu: Int = 247, fast: Bool = true, seed: UInt64 = 42, alarms: [Alarm] = [],
         speaksVersion1_1: Bool = true, centralExtensions: ExtensionFeatures = .version1_1, answersTwice: Bool = false,
         transport wrap: (any WatchTransport) -> any WatchTransport = { $0 }) throws {
        let records = SleepDataGenerator(seed: seed, timeZone: Rig.berlin).records(days: days, lastMorning: Rig.now, notAfter: Rig.now)
        var simulatorConfiguration = SimulatorConfiguration(capabilities: capabilities, speaksVersion1_1: speaksVersion1_1)
        simulatorConfiguration.answersTwice = answersTwice
        var watchConfiguration = WatchConfiguration()
        watchConfiguration.timeZone = Rig.berlin
        watchConfiguration.now = { Rig.now }
        if fast {
            simulatorConfiguration.pageRetransmitTimeout = .milliseconds(40)
            simulatorConfiguration.eventRetransmitTimeout = .milliseconds(40)
            watchConfiguration.requestTimeout = .milliseconds(60)
            watchConfiguration.pageIdleTimeout = .milliseconds(80)
            watchConfiguration.requestRetries = 6
            watchConfiguration.pageIdleRetries = 8
        }
        simulator = SimulatedWatch(configuration: simulatorConfiguration, state: SimulatorState(alarms: alarms, records: records))
        watch = Watch(transport: wrap(LoopbackTransport(peripheral: simulator, mtu: try ATTMTU(mtu), faults: faults)), configuration: watchConfiguration,
                      extensions: centralExtensions)
        groundTruth = records
    }

    var start: UInt32 { UInt32(groundTruth.first?.start ?? 0) }
}
