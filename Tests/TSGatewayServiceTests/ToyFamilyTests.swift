import Foundation
import Logging
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
@testable import TSGatewayService
import TSGATT
import TSModels
import TSProtocol
import TSSimulator
import TSStore
import TSTransport
import TSWatchService

/// A whole family registered inside this test target, as a new family's module would register
/// one: the toy's dialect (`ToyBand`, with a pairing secret of its own) and its simulated band.
/// With that one registration the simulated band opens like any other (`--simulate`, `simulated:
/// true`), serve's configuration takes its secret and checks it by the family's rule, and serve
/// makes a supervisor for it; nothing outside this target names the toy.
@Suite("a family added in one registration", .serialized, .timeLimit(.minutes(2)))
struct ToyFamilyTests {
    /// The toy's pairing secret: a 4-digit pin (`pair --credential toy-pin=PIN`, `toy-pin:`).
    static let pin = PairingCredential(key: "toy-pin", holder: "a toy band", meaning: "the 4-digit pin a toy band shows",
                                       problem: { text in text.count == 4 && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) ? nil : "a toy pin is 4 digits" })

    static let family: WatchFamily = {
        var dialect = ToyBand.dialect
        dialect.credential = pin
        return WatchFamily(dialect: dialect, simulated: SimulatedFamily { options in
            let band = ToyBandPeripheral(battery: 64, alarms: options.alarms)
            return SimulatedLink(transport: LoopbackTransport(peripheral: band, mtu: try ATTMTU(247)), device: SimulatedToyBand(band: band))
        })
    }()

    /// The toy's simulated band as the front doors see any simulated device.
    struct SimulatedToyBand: SimulatedDevice {
        let band: ToyBandPeripheral
        var sleepRecords: [SleepItem] { [] }
        func alarmTable() async -> [Alarm]? { await band.alarms }
        func editFirstAlarmOnWrist() async {}
    }

    @Test("its simulated band opens through the families, in its own dialect")
    func simulated() async throws {
        ToyFamilyCommandTests.register()
        var options = SimulatedWatchOptions()
        options.alarms = ToyDialectTests.alarms
        let opened = try WatchFamilies.openSimulated(options, dialect: .toy)
        #expect(opened.central.dialect == .toy)
        #expect(try await opened.central.connect().model == "Toy Band 1")
        #expect(try await opened.central.alarms() == ToyDialectTests.alarms)
        #expect(await opened.device.alarmTable() == ToyDialectTests.alarms, "what the CLI's simulated watch would remember")
        await opened.central.disconnect()
    }

    @Test("serve's configuration takes its pairing secret by its rule, and only for its watches")
    func configuration() throws {
        ToyFamilyCommandTests.register()
        let parsed = try GatewayConfiguration.parse("watches:\n  - address: AA:BB:CC:DD:EE:01\n    dialect: toy\n    toy-pin: \"0815\"\n", file: "toy.yaml")
        #expect(parsed.watches[0].pairingSecret == PairingSecret(key: "toy-pin", text: "0815"))
        #expect(WatchSupervisor.watchConfiguration(parsed, entry: parsed.watches[0]).pairingSecret?.text == "0815", "the central is given it")
        #expect(String(describing: parsed.watches[0].pairingSecret!).contains("0815") == false, "a secret never prints itself")
        let cases = [
            ("watches:\n  - address: AA:BB:CC:DD:EE:01\n    dialect: toy\n    toy-pin: \"12a4\"\n", "toy-pin: a toy pin is 4 digits"),
            ("watches:\n  - address: AA:BB:CC:DD:EE:01\n    toy-pin: \"1234\"\n", "toy-pin is for a toy band; add `dialect: toy`"),
        ]
        for (text, message) in cases {
            let error = try #require(throws: ConfigurationError.self) { try GatewayConfiguration.parse(text, file: "toy.yaml") }
            #expect(String(describing: error).contains(message), "\(error)")
        }
    }

    @Test("serve makes a supervisor for a simulated toy band, which reads its alarms")
    func serve() async throws {
        ToyFamilyCommandTests.register()
        let directory = try ToyDialectTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try GatewayConfiguration.parse("watches:\n  - simulated: true\n    dialect: toy\n", file: "toy.yaml")
        configuration.database = directory.appendingPathComponent("db.sqlite").path
        let daemon = GatewayDaemon(configuration: configuration, logger: Logger(label: "toy"))
        let supervisors = try await daemon.makeSupervisors(store: try GatewayStore(path: configuration.database))
        let watch = try #require(supervisors.first?.watch)
        #expect(watch.dialect == .toy)
        #expect(try await watch.connect().model == "Toy Band 1")
        // The simulated watch's default alarm, as far as the toy's wire carries it (no label, snooze or remark).
        let held = Alarm.simulatorDefault
        #expect(try await watch.alarms() == [Alarm(slot: held.slot, hour: held.hour, minute: held.minute, isEnabled: held.isEnabled, repeatDays: held.repeatDays)])
        await watch.disconnect()
    }
}
