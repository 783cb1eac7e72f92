import Foundation
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSNpkFamily
import TSProtocolV1Family
import TSQRingFamily
import TSModels
import TSNpkSimulator
import TSProtocol
import TSQRingSimulator
import TSSimulator
import TSTransport
@testable import TSWatchService

/// `tsgateway probe`'s identification over each simulated watch in process: the dialect whose
/// service a watch offers is asked who it is, in its own terms, and nothing on the watch changes.
@Suite struct WatchProbeTests {
    /// Each family's simulated watch over the loopback transport, and the services it offers.
    static func simulated(_ family: WatchFamily, _ options: SimulatedWatchOptions = SimulatedWatchOptions()) throws -> SimulatedLink {
        try #require(family.simulated).open(options)
    }

    static let standardUUIDs = [WatchService.deviceInformation.uuid, WatchService.battery.uuid, WatchService.heartRate.uuid]

    @Test func theSimulatedV1WatchAnswersHelloAndDeviceInfoAndItsClockIsLeftAlone() async throws {
        let link = try Self.simulated(.protocolV1)
        let attempts = await WatchProbe.identify(serviceUUIDs: [GATTProfile.protocolV1.service] + Self.standardUUIDs, dialects: WatchFamilies.dialects) { _ in link.transport }
        #expect(attempts.count == 1, "only v1's service is a dialect's: \(attempts)")
        let answer = try #require(attempts.first?.answer, "\(attempts)")
        #expect(answer.dialect == .protocolV1 && answer.asked == "HELLO, then DEVICE_INFO" && !answer.model.isEmpty)
        let watch = try #require(link.device as? SimulatedProtocolV1Watch)
        #expect(await watch.watch.timeSets == 0, "the probe set the watch's clock")
        let report = WatchProbe.conclude(address: "AA:BB:CC:DD:EE:01", name: nil, services: [], deviceInformation: [], attempts: attempts)
        #expect(report.verdict == .identified && report.dialect == .protocolV1)
        #expect(report.next == "tsgateway pair AA:BB:CC:DD:EE:01 --dialect v1")
    }

    @Test func theSimulatedNpkWatchAnswersItsDeviceInformationWithoutALoginOrABind() async throws {
        let link = try Self.simulated(.npk)
        let attempts = await WatchProbe.identify(serviceUUIDs: [GATTProfile.npk.service.lowercased()], dialects: WatchFamilies.dialects) { _ in link.transport }
        let answer = try #require(attempts.first?.answer, "\(attempts)")
        #expect(answer == DialectIdentity(dialect: .npk, asked: "device information (02/02), without logging in", model: "NPK Simulator",
                                          firmware: "1.0.0-sim", detail: "up to 8 alarms"))
        let watch = try #require(link.device as? SimulatedNpkDevice).watch
        let statistics = await watch.statistics
        #expect(statistics.logins == 0 && statistics.binds == 0, "\(statistics)")
        #expect(await watch.clock == nil, "the probe set the watch's clock")
        let report = WatchProbe.conclude(address: "AA:BB:CC:DD:EE:02", name: nil, services: [], deviceInformation: [], attempts: attempts)
        #expect(report.next == "tsgateway pair AA:BB:CC:DD:EE:02 --dialect npk")
    }

    @Test func theSimulatedRingAnswersItsBatteryRequestAndItsClockIsLeftAlone() async throws {
        let link = try Self.simulated(.qring)
        let attempts = await WatchProbe.identify(serviceUUIDs: [GATTProfile.qring.service, WatchService.deviceInformation.uuid], dialects: WatchFamilies.dialects) { _ in link.transport }
        let answer = try #require(attempts.first?.answer, "\(attempts)")
        #expect(answer.dialect == .qring && answer.model == "R02_5A1C" && answer.firmware == "R02_3.00.06_240523")
        #expect(answer.detail?.hasPrefix("battery ") == true, "\(answer)")
        let ring = try #require(link.device as? SimulatedQRingDevice).ring
        #expect(await ring.clock == nil, "the probe set the ring's clock")
    }

    /// A watch that offers a dialect's service but speaks something else (NPK's Realtek service
    /// on another vendor's watch): no answer, said so, and the standard services are what is left.
    @Test(.timeLimit(.minutes(1))) func aWatchThatDoesNotSpeakTheDialectOfItsServiceIsNotMistakenForIt() async throws {
        let link = try Self.simulated(.protocolV1)
        var quick = WatchConfiguration.probing
        quick.requestTimeout = .milliseconds(300)
        let attempts = await WatchProbe.identify(serviceUUIDs: [GATTProfile.npk.service] + Self.standardUUIDs, dialects: WatchFamilies.dialects, configuration: quick) { _ in link.transport }
        #expect(attempts.count == 1 && attempts[0].dialect == .npk && attempts[0].answer == nil)
        // The probe asks as often as its configuration says (once more after the first), not the
        // three retries of a sync: a watch that does not answer costs a probe seconds, not a minute.
        let asked = quick.requestRetries + 1
        #expect(asked < WatchConfiguration().requestRetries + 1)
        #expect(attempts[0].failure == "the watch did not answer deviceInfo (02/02) (\(asked) attempts); is it in range and awake?", "\(attempts[0])")
        let services = Self.standardUUIDs.map { ProbeReport.Service(uuid: $0, name: WatchProbe.serviceName($0, dialects: WatchFamilies.dialects), characteristics: []) }
        let report = WatchProbe.conclude(address: "AA:BB:CC:DD:EE:03", name: nil, services: services, deviceInformation: [], attempts: attempts)
        #expect(report.verdict == .standardServicesOnly && report.dialect == .standard)
        #expect(report.next.hasPrefix("tsgateway pair AA:BB:CC:DD:EE:03 --dialect standard: standard services only (it did not answer npk)"), "\(report.next)")
    }

    @Test func aDeviceWithNeitherADialectNorStandardServicesPointsAtAddingAWatch() {
        let services = [ProbeReport.Service(uuid: "12345678-1234-5678-1234-56789abcdef0", name: nil, characteristics: [])]
        let report = WatchProbe.conclude(address: "AA:BB:CC:DD:EE:04", name: nil, services: services, deviceInformation: [], attempts: [])
        #expect(report.verdict == .unknown && report.dialect == nil)
        #expect(report.next.contains("Adding a watch") || report.next.contains("adding a watch"), "\(report.next)")
    }

    @Test func servicesAreNamedAndTheSharedOneSaysSo() {
        #expect(WatchProbe.serviceName(WatchService.heartRate.uuid, dialects: WatchFamilies.dialects) == "Heart Rate")
        #expect(WatchProbe.serviceName(GATTProfile.npk.service, dialects: WatchFamilies.dialects) == "npk dialect's service, shared with other protocols")
        #expect(WatchProbe.serviceName(GATTProfile.qring.service, dialects: WatchFamilies.dialects) == "qring dialect's service")
    }
}
