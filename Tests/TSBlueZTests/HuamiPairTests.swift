import Foundation
import TSTransport
import Testing
import TSBlueZ
import TSGATT
import TSHuami
import TSHuamiSimulator
import TSModels
import TSTestSupport
@testable import TSDBus

/// A fake bluetoothd on a private bus serving the simulated Huami band's GATT layout (`FEE0` with
/// configuration, fetch control, activity data, battery and Current Time; `FEE1` with auth;
/// Device Information): WriteValue and ReadValue reach the band, its notifications become Value
/// changes of the characteristic (StartNotify; no AcquireNotify, as a BlueZ without it). Its
/// WriteValue replies once the band's handler has returned, so an answer sent from inside the
/// handler reaches the central before the write's reply, and a `late` one after it.
final class BridgedHuamiBand: @unchecked Sendable {
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_47"
    let bus: PrivateBus
    let server: BusConnection
    let band: SimulatedHuamiBand
    private let lock = NSLock()
    private var linked = false
    private var agent: (sender: String, path: String)?
    private var flags: [String: Bool] = ["Paired": false, "Trusted": false]
    private let calls = DBusCallQueue()

    func flag(_ name: String) -> Bool { lock.withLock { flags[name] ?? false } }
    private func setFlag(_ name: String, _ value: Bool) { lock.withLock { flags[name] = value } }
    private func setAgent(_ value: (String, String)) { lock.withLock { agent = value } }
    private var currentAgent: (sender: String, path: String)? { lock.withLock { agent } }
    /// True the first time after a disconnect: the band hears of the central once per link.
    private func claimLink() -> Bool { lock.withLock { defer { linked = true }; return !linked } }
    private func dropLink() { lock.withLock { linked = false } }

    init(band: SimulatedHuamiBand) async throws {
        self.band = band
        (bus, server) = try await FakeBluetoothd.start()
        let server = self.server
        try server.export(path: BlueZ.managerPath, interfaces: [DBusInterface(BlueZInterface.agentManager, methods: [
            DBusMethod("RegisterAgent", in: "os") { [weak self] arguments, call in
                self?.setAgent((call.sender, arguments[0].objectPathValue ?? ""))
                return []
            },
            DBusMethod("RequestDefaultAgent", in: "o") { _, _ in [] },
        ])])
        try server.export(path: Self.device, interfaces: [DBusInterface(BlueZInterface.device, methods: [
            DBusMethod("Disconnect") { [weak self] _, _ in
                self?.dropLink()
                await band.centralDisconnected()
                return []
            },
            DBusMethod("Pair") { [weak self] _, _ in
                guard let self, let agent = self.currentAgent else { throw BusError(name: BlueZErrorName.authenticationFailed, message: "no agent") }
                _ = try await server.call(destination: agent.sender, path: agent.path, interface: BlueZInterface.agent, member: "RequestConfirmation",
                                          [.objectPath(BridgedHuamiBand.device), .uint32(123_456)])
                self.setFlag("Paired", true)
                return []
            },
        ], properties: [
            DBusProperty("Address", "s", get: { .string("AA:BB:CC:DD:EE:47") }), DBusProperty("Name", "s", get: { .string(band.configuration.name) }),
            DBusProperty("Connected", "b", get: { .boolean(true) }), DBusProperty("ServicesResolved", "b", get: { .boolean(true) }),
            DBusProperty("Paired", "b", get: { [weak self] in .boolean(self?.flag("Paired") ?? false) }),
            DBusProperty("Trusted", "b", get: { [weak self] in .boolean(self?.flag("Trusted") ?? false) }, set: { [weak self] in self?.setFlag("Trusted", $0.boolValue ?? false) }),
        ])])
        typealias Served = SimulatedHuamiBand.Characteristic
        let layout: [(service: String, characteristics: [(Served, [String])])] = [
            (HuamiGATT.service, [(.configuration, ["write", "notify"]), (.fetchControl, ["write", "notify"]), (.activityData, ["notify"]),
                                 (.battery, ["read", "notify"]), (.currentTime, ["read", "write"])]),
            (HuamiGATT.secondService, [(.auth, ["write", "notify"])]),
        ]
        var paths: [Served: String] = [:]
        for (serviceIndex, service) in layout.enumerated() {
            let servicePath = Self.device + "/service00\(serviceIndex + 1)0"
            try server.export(path: servicePath, interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
                DBusProperty("UUID", "s", get: { .string(service.service) }),
            ])])
            for (index, (served, _)) in service.characteristics.enumerated() {
                paths[served] = servicePath + "/char00\(serviceIndex + 1)\(index + 1)"
            }
        }
        let notifyPaths = paths
        let notify: @Sendable (Served, [UInt8]) async -> Void = { characteristic, bytes in
            guard let path = notifyPaths[characteristic] else { return }
            try? server.emitPropertiesChanged(path: path, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(bytes)])
        }
        for (serviceIndex, service) in layout.enumerated() {
            let servicePath = DBusValue.objectPath(Self.device + "/service00\(serviceIndex + 1)0")
            for (served, characteristicFlags) in service.characteristics {
                var methods: [DBusMethod] = []
                if characteristicFlags.contains("read") {
                    methods.append(DBusMethod("ReadValue", in: "a{sv}", out: "ay", inArrivalOrderOn: calls) { _, _ in [.bytes(try await band.read(served))] })
                }
                if characteristicFlags.contains("write") {
                    methods.append(DBusMethod("WriteValue", in: "aya{sv}", inArrivalOrderOn: calls) { [weak self] arguments, _ in
                        if self?.claimLink() == true { await band.centralConnected(notify: notify) }
                        await band.centralWrote(arguments[0].byteArrayValue ?? [], to: served)
                        return []
                    })
                }
                if characteristicFlags.contains("notify") {
                    methods.append(DBusMethod("StartNotify") { [weak self] _, _ in
                        if self?.claimLink() == true { await band.centralConnected(notify: notify) }
                        return []
                    })
                    methods.append(DBusMethod("StopNotify") { _, _ in [] })
                }
                try server.export(path: paths[served]!, interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: methods, properties: [
                    DBusProperty("UUID", "s", get: { .string(served.uuid) }), DBusProperty("Service", "o", get: { servicePath }),
                    DBusProperty("Flags", "as", get: { .strings(characteristicFlags) }), DBusProperty("MTU", "q", get: { .uint16(247) }),
                ])])
            }
        }
        let informationPath = Self.device + "/service0040"
        try server.export(path: informationPath, interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
            DBusProperty("UUID", "s", get: { .string(WatchService.deviceInformation.uuid) }),
        ])])
        let firmware = band.deviceInformation(.firmwareRevision) ?? []
        try server.export(path: informationPath + "/char0041", interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("ReadValue", in: "a{sv}", out: "ay") { _, _ in [.bytes(firmware)] },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(StandardCharacteristic.firmwareRevision.uuid) }),
            DBusProperty("Service", "o", get: { .objectPath(informationPath) }), DBusProperty("Flags", "as", get: { .strings(["read"]) }),
            DBusProperty("MTU", "q", get: { .uint16(247) }),
        ])])
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

/// `tsgateway pair --dialect huami --auth-key KEY`, then `info` and `sleep sync`, through BlueZ's
/// D-Bus API (the fake above) to a simulated band answering late: each answer 2.2 s after its
/// write's reply, later than the 2 s request timeout (issue 47: pair exited 75 with "the watch
/// did not answer the auth challenge", though the band had answered), and before the reply.
@Suite(.serialized) struct HuamiPairTests {
    static let address = "AA:BB:CC:DD:EE:47"
    static let key = "00112233445566778899aabbccddeeff"

    @Test(arguments: [AnswerTiming.late(.milliseconds(2200)), .beforeResponse])
    func pairInfoAndSleepSyncThroughABandAnsweringLateOrBeforeTheWriteResponse(_ timing: AnswerTiming) async throws {
        _ = try CLI.requireBinary()
        var configuration = SimulatedHuamiBand.Configuration()
        configuration.answerTiming = timing
        let history = HuamiBandHistory(seed: 47, timeZone: .current, now: Date(), days: 3, format: configuration.sampleFormat)
        let band = SimulatedHuamiBand(configuration: configuration, history: history)
        let fake = try await BridgedHuamiBand(band: band); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-huamipair-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let db = home.appendingPathComponent("db.sqlite").path
        let environment = ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address]

        let paired = try await CLI.runOnceDetached(["-v", "pair", Self.address, "--dialect", "huami", "--auth-key", Self.key, "--db", db], environment: environment)
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(paired.stdout.hasPrefix("paired with Mi Smart Band 5 (\(Self.address)), firmware \(configuration.firmware), speaking huami"), "\(paired.stdout)")
        #expect(fake.flag("Paired") && fake.flag("Trusted"), "the Bluetooth bond first")
        #expect(await band.statistics.authsAccepted == 1)
        // -v: what arrived and which waiting exchange took it.
        #expect(paired.stderr.contains("watch: auth notification 10 83 01 → the auth answer"), "\(paired.stderr)")
        #expect(!paired.stderr.contains(Self.key) && !paired.stdout.contains(Self.key), "the key is never printed")

        let info = try await CLI.runOnceDetached(["info", "--json", "--db", db], environment: environment)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains(#""model" : "Mi Smart Band 5""#), "\(info.stdout)")
        #expect(await band.statistics.authsAccepted == 2, "info authenticated with the key pair kept")

        let synced = try await CLI.runOnceDetached(["sleep", "sync", "--since", "2d", "--json", "--db", db], environment: environment)
        #expect(synced.status == 0, "\(synced.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(synced.stdout.utf8)) as? [String: Any], "\(synced.stdout)")
        let stored = try #require(report["stored"] as? Int)
        #expect(stored > 5, "two nights of stages: \(synced.stdout)")
        #expect(report["fetched"] as? Int == stored)
        #expect(await band.statistics.acknowledgements >= 1, "acknowledged once stored")
    }
}
