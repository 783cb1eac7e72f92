import Foundation
import TSBlueZ
import TSBlueZTransport
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulatedHistory
import TSSimulator
import TSTestSupport
import TSTransport
import Testing
@testable import TSDBus

/// A fake bluetoothd on a private bus whose watch characteristics are bridged to the in-process
/// simulator: WriteValue feeds the simulator, the simulator's notifications become Value changes.
/// The simulator is protocol v1's unless another peripheral and its dialect's GATT profile are given.
final class BridgedWatch: @unchecked Sendable {
    let bus: PrivateBus
    let server: BusConnection
    let simulator: any PeripheralEndpoint
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_09"
    static let notifyPath = device + "/service0010/char0013"
    private let lock = NSLock()
    private var flags: [String: Bool] = ["Paired": false, "Trusted": false]
    private(set) var agent: (sender: String, path: String, capability: String)?
    private(set) var confirmedByAgent = false
    private(set) var agentMadeDefault = false
    /// The passkey the agent typed in, when the watch pairs by passkey entry.
    private(set) var passkeyTyped: UInt32?
    /// The watch shows this passkey and pairs by passkey entry (`passkeyEntry`), as a Garmin watch does.
    static let shownPasskey: UInt32 = 40_961

    func flag(_ name: String) -> Bool { lock.lock(); defer { lock.unlock() }; return flags[name] ?? false }
    func setFlag(_ name: String, _ value: Bool) { lock.lock(); flags[name] = value; lock.unlock() }
    func setAgent(_ value: (String, String, String)) { lock.lock(); agent = value; lock.unlock() }
    func setConfirmed() { lock.lock(); confirmedByAgent = true; lock.unlock() }
    func setAgentMadeDefault() { lock.withLock { agentMadeDefault = true } }
    func setPasskeyTyped(_ value: UInt32?) { lock.withLock { passkeyTyped = value } }

    private(set) var acquiredWrites = 0
    func countAcquiredWrite() { lock.lock(); acquiredWrites += 1; lock.unlock() }
    /// Write requests in flight now, and the most ever in flight at once.
    private var writesInFlight = 0
    private(set) var mostWritesInFlight = 0
    /// Starts a write request as bluetoothd does: refused with InProgress while another is in flight.
    func beginWrite() throws {
        try lock.withLock {
            guard writesInFlight == 0 else { throw BusError(name: BlueZErrorName.inProgress, message: "In Progress") }
            writesInFlight += 1
            mostWritesInFlight = max(mostWritesInFlight, writesInFlight)
        }
    }
    func endWrite() { lock.withLock { writesInFlight -= 1 } }

    /// `requestsOnly`: the write characteristic takes write requests only, each answered after the
    /// simulator has handled it and 20 ms more, and a second one while one is in flight is refused
    /// with InProgress, as bluetoothd refuses it.
    /// `passkeyEntry`: Pair asks the pairing's agent for the passkey the watch shows
    /// (`shownPasskey`) instead of a confirmation, and fails as bluetoothd does when it is refused
    /// (AuthenticationRejected) or wrong (AuthenticationFailed).
    init(simulator: any PeripheralEndpoint, mtu: UInt16, offerAcquireWrite: Bool = false, profile: GATTProfile = .protocolV1,
         requestsOnly: Bool = false, passkeyEntry: Bool = false) async throws {
        self.simulator = simulator
        bus = try PrivateBus()
        server = try BusConnection(.address(bus.address))
        try await server.requestName(BlueZ.service)
        server.exportObjectManager(at: "/")
        try FakeBluetoothd.exportAdapter(on: server)
        let server = self.server
        try server.export(path: BlueZ.managerPath, interfaces: [DBusInterface(BlueZInterface.agentManager, methods: [
            DBusMethod("RegisterAgent", in: "os") { [weak self] arguments, call in
                self?.setAgent((call.sender, arguments[0].objectPathValue ?? "", arguments[1].stringValue ?? ""))
                return []
            },
            DBusMethod("RequestDefaultAgent", in: "o") { [weak self] _, _ in
                self?.setAgentMadeDefault()
                return []
            },
        ])])
        try server.export(path: Self.device, interfaces: [DBusInterface(BlueZInterface.device, methods: [
            DBusMethod("Disconnect") { _, _ in [] },
            DBusMethod("Pair") { [weak self] _, _ in
                // As bluetoothd does for Just Works with confirmation: ask the default agent.
                guard let self, let agent = self.agent else { throw BusError(name: BlueZErrorName.authenticationFailed, message: "no agent") }
                if passkeyEntry {
                    let typed: UInt32?
                    do {
                        let reply = try await server.call(destination: agent.sender, path: agent.path, interface: BlueZInterface.agent, member: "RequestPasskey",
                                                          [.objectPath(BridgedWatch.device)])
                        typed = reply.first?.uint32Value
                    } catch {
                        throw BusError(name: BlueZErrorName.authenticationRejected, message: "Authentication Rejected")
                    }
                    self.setPasskeyTyped(typed)
                    guard typed == Self.shownPasskey else { throw BusError(name: BlueZErrorName.authenticationFailed, message: "Authentication Failed") }
                    self.setFlag("Paired", true)
                    return []
                }
                _ = try await server.call(destination: agent.sender, path: agent.path, interface: BlueZInterface.agent, member: "RequestConfirmation",
                                          [.objectPath(BridgedWatch.device), .uint32(123_456)])
                self.setConfirmed()
                self.setFlag("Paired", true)
                return []
            },
        ], properties: [
            DBusProperty("Address", "s", get: { .string("AA:BB:CC:DD:EE:09") }), DBusProperty("Connected", "b", get: { .boolean(true) }),
            DBusProperty("ServicesResolved", "b", get: { .boolean(true) }),
            DBusProperty("Paired", "b", get: { [weak self] in .boolean(self?.flag("Paired") ?? false) }),
            DBusProperty("Trusted", "b", get: { [weak self] in .boolean(self?.flag("Trusted") ?? false) }, set: { [weak self] in self?.setFlag("Trusted", $0.boolValue ?? false) }),
        ])])
        let servicePath = DBusValue.objectPath(Self.device + "/service0010")
        try server.export(path: Self.device + "/service0010", interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
            DBusProperty("UUID", "s", get: { .string(profile.service) }),
        ])])
        try server.export(path: Self.device + "/service0010/char0011", interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { [weak self] arguments, _ in
                guard requestsOnly, let self else {
                    await simulator.centralWrote(arguments[0].byteArrayValue ?? [])
                    return []
                }
                try self.beginWrite()
                defer { self.endWrite() }
                await simulator.centralWrote(arguments[0].byteArrayValue ?? [])
                try? await Task.sleep(for: .milliseconds(20))
                return []
            },
        ] + (offerAcquireWrite ? [DBusMethod("AcquireWrite", in: "a{sv}", out: "hq") { [weak self] _, _ in
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else { throw BusError(name: BusError.failed, message: "socketpair") }
            // bluetoothd hands out the non-blocking end it made; its own end is served by a thread here.
            _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) & ~O_NONBLOCK)
            let peer = pair[1]
            let owner = self
            // Like bluetoothd: each datagram on the socket is one ATT write command, in order.
            Thread {
                var buffer = [UInt8](repeating: 0, count: 600)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(peer, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    let chunk = Array(buffer[0..<count])
                    owner?.countAcquiredWrite()
                    let done = DispatchSemaphore(value: 0)
                    Task { await simulator.centralWrote(chunk); done.signal() }
                    done.wait()
                }
                close(peer)
            }.start()
            return [.unixFD(pair[0]), .uint16(mtu)]
        }] : []), properties: [
            DBusProperty("UUID", "s", get: { .string(profile.writeCharacteristic) }), DBusProperty("Service", "o", get: { servicePath }),
            DBusProperty("Flags", "as", get: { .strings(requestsOnly ? ["write"] : ["write", "write-without-response"]) }), DBusProperty("MTU", "q", get: { .uint16(mtu) }),
        ])])
        try server.export(path: Self.notifyPath, interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("StartNotify") { _, _ in
                let attMTU = try ATTMTU(Int(mtu))
                await simulator.centralConnected(mtu: attMTU) { chunk in
                    try? server.emitPropertiesChanged(path: BridgedWatch.notifyPath, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(chunk)])
                }
                return []
            },
            DBusMethod("StopNotify") { _, _ in await simulator.centralDisconnected(); return [] },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(profile.notifyCharacteristic) }), DBusProperty("Service", "o", get: { servicePath }),
            DBusProperty("Flags", "as", get: { .strings(["notify"]) }), DBusProperty("MTU", "q", get: { .uint16(mtu) }),
        ])])
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

@Suite struct BlueZTransportTests {
    @Test func theDeviceActorSyncsThroughBlueZGATTWithTheNegotiatedMTU() async throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let now = Date(timeIntervalSince1970: 1_762_156_800)
        let records = SleepDataGenerator(seed: 5, timeZone: zone).records(days: 3, lastMorning: now, notAfter: now)
        let simulator = SimulatedWatch(state: SimulatorState(records: records))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 185); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        let watch = Watch(transport: BlueZTransport(bluez: bluez, address: "AA:BB:CC:DD:EE:09", adapter: "hci0"), configuration: configuration)

        let info = try await watch.connect()
        #expect(info.model == "TS-Sim W10")
        #expect(await watch.mtu?.value == 185, "the characteristic's MTU property is the one used for fragmentation")
        let table = [Alarm(slot: 0, label: "Over BlueZ", hour: 6, minute: 30, repeatDays: .workdays)]
        try await watch.setAlarms(table)
        #expect(try await watch.alarms() == table)
        #expect(try await watch.sleepRecords(start: UInt32(records[0].start), end: nil) == records)
        await watch.disconnect()
    }

    /// A watch whose characteristic takes write requests only (the simulated watch with
    /// `--answer-timing before-response`): bluetoothd refuses a second request in flight, and a
    /// v1 sync acknowledges pages while its last write is unanswered. "write failed: that
    /// operation is already in progress" in both modes of issue 47's before-response run.
    @Test func aSyncThroughACharacteristicTakingWriteRequestsOnlyWritesOneAtATime() async throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let now = Date(timeIntervalSince1970: 1_762_156_800)
        let records = SleepDataGenerator(seed: 5, timeZone: zone).records(days: 7, lastMorning: now, notAfter: now)
        let simulator = SimulatedWatch(state: SimulatorState(records: records))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 185, requestsOnly: true); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        let watch = Watch(transport: BlueZTransport(bluez: bluez, address: "AA:BB:CC:DD:EE:09", adapter: "hci0"), configuration: configuration)
        _ = try await watch.connect()
        #expect(try await watch.sleepRecords(start: UInt32(records[0].start), end: nil) == records)
        #expect(fake.mostWritesInFlight == 1)
        await watch.disconnect()
    }

    @Test func theCLIReachesARealWatchPathThroughBlueZ() async throws {
        _ = try CLI.requireBinary()
        let simulator = SimulatedWatch(state: SimulatorState(alarms: [Alarm(slot: 2, label: "From the wrist", hour: 5, minute: 55)]))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 247); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bluez-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let arguments = ["alarms", "get", "--device", "AA:BB:CC:DD:EE:09", "--db", home.appendingPathComponent("db.sqlite").path]
        let result = try await CLI.runOnceDetached(arguments, environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("05:55") && result.stdout.contains("From the wrist"))
        let missing = try await CLI.runOnceDetached(["info", "--device", "11:22:33:44:55:66", "--db", home.appendingPathComponent("db.sqlite").path], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(missing.status == 80)
        #expect(missing.stderr.contains("no device 11:22:33:44:55:66 is known to BlueZ"))
    }

    /// A device command sets a Bluetooth watch's clock at connect only from a clock tsgateway
    /// trusts (`time sync` refuses then, exit 75, unless --force).
    @Test func theCLISetsNoWatchClockAtConnectFromAnUntrustedClock() async throws {
        _ = try CLI.requireBinary()
        let simulator = SimulatedWatch(state: SimulatorState(alarms: [Alarm(slot: 0, label: "Work", hour: 6, minute: 45)]))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 247); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-bluez-clock-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let database = ["--device", "AA:BB:CC:DD:EE:09", "--db", home.appendingPathComponent("db.sqlite").path]
        let untrusted = ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address, "TSGATEWAY_CLOCK": "untrusted"]
        let alarms = try await CLI.runOnceDetached(["alarms", "get"] + database, environment: untrusted)
        #expect(alarms.status == 0, "\(alarms.stderr)")
        #expect(await simulator.timeSets == 0, "the watch's clock was set at connect from an untrusted clock")
        let refused = try await CLI.runOnceDetached(["time", "sync"] + database, environment: untrusted)
        #expect(refused.status == 75 && refused.stderr.contains("TSGATEWAY_CLOCK=untrusted"), "\(refused)")
        #expect(await simulator.timeSets == 0)
        let trusted = try await CLI.runOnceDetached(["alarms", "get"] + database, environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address, "TSGATEWAY_CLOCK": "trusted"])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(await simulator.timeSets == 1, "a trusted clock sets the watch's at connect")
    }

    @Test func pairUsesTheAgentTrustsTheWatchAndMakesItTheDefault() async throws {
        _ = try CLI.requireBinary()
        let simulator = SimulatedWatch(state: SimulatorState(alarms: [Alarm(slot: 0, label: "Paired", hour: 7, minute: 5)]))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 247); defer { fake.stop() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-pair-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let db = home.appendingPathComponent("db.sqlite").path
        let paired = try await CLI.runOnceDetached(["pair", "aa:bb:cc:dd:ee:09", "--db", db], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(paired.stdout == "paired with TS-Sim W10 (AA:BB:CC:DD:EE:09), firmware 1.4.2, speaking v1; it is now the default watch\n")
        // pair's own agent, for its own Pair call: not the default agent (a pairing the watch's side answers is not pair's).
        #expect(fake.agent?.capability == "KeyboardDisplay")
        #expect(!fake.agentMadeDefault)
        #expect(fake.confirmedByAgent, "bluetoothd's confirmation request was answered by our agent")
        #expect(fake.flag("Paired") && fake.flag("Trusted"))
        // Later commands need no address.
        let alarms = try await CLI.runOnceDetached(["alarms", "get", "--db", db], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(alarms.status == 0, "\(alarms.stderr)")
        #expect(alarms.stdout.contains("07:05") && alarms.stdout.contains("Paired"))
        let bad = try await CLI.runOnceDetached(["pair", "AA:BB", "--db", db], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("The value 'AA:BB' is invalid for '<address>': expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF"), "\(bad.stderr)")
    }

    /// A watch that shows a passkey (a Garmin watch): pair types the one --passkey gives, or the
    /// one read from standard input after its prompt; no passkey, a malformed one or a wrong one
    /// is a clear error, and nothing is stored.
    @Test func aWatchThatShowsAPasskeyIsPairedWithTheOneTypedIn() async throws {
        _ = try CLI.requireBinary()
        let shown = String(format: "%06u", BridgedWatch.shownPasskey)
        /// pair's result, and the passkey the watch was given and whether it is paired.
        func pair(_ extra: [String], stdin: String?) async throws -> (result: CLI.Result, typed: UInt32?, paired: Bool) {
            let fake = try await BridgedWatch(simulator: SimulatedWatch(), mtu: 247, passkeyEntry: true)
            defer { fake.stop() }
            let cli = try CLI()
            defer { cli.cleanUp() }
            let result = try await cli.runDetached(["pair", "aa:bb:cc:dd:ee:09", "--db", "db.sqlite"] + extra, stdin: stdin,
                                                   environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
            return (result, fake.passkeyTyped, fake.flag("Paired"))
        }
        let byOption = try await pair(["--passkey", shown], stdin: nil)
        #expect(byOption.result.status == 0, "\(byOption.result.stderr)")
        #expect(byOption.typed == BridgedWatch.shownPasskey && byOption.paired)
        #expect(!byOption.result.stdout.contains(shown) && !byOption.result.stderr.contains(shown), "the passkey is not printed")

        let byPrompt = try await pair([], stdin: "\(shown)\n")
        #expect(byPrompt.result.status == 0, "\(byPrompt.result.stderr)")
        #expect(byPrompt.result.stderr.contains("the watch shows a passkey: type its six digits and press Enter"))
        #expect(byPrompt.typed == BridgedWatch.shownPasskey && byPrompt.paired)

        let retyped = try await pair([], stdin: "12ab\n\(shown)\n")
        #expect(retyped.result.status == 0 && retyped.result.stderr.contains("that is not the six digits the watch shows"), "\(retyped.result.stderr)")

        let none = try await pair([], stdin: "")
        #expect(none.result.status == 64 && !none.paired, "\(none.result)")
        #expect(none.result.stderr.contains("the watch asked for the passkey it shows and standard input ended before one was typed; give it with --passkey"),
                "\(none.result.stderr)")

        let wrong = try await pair(["--passkey", "000001"], stdin: nil)
        #expect(wrong.result.status != 0 && !wrong.paired && wrong.result.stderr.contains("pairing failed"), "\(wrong.result.stderr)")

        let malformed = try await pair(["--passkey", "12345x"], stdin: nil)
        #expect(malformed.result.status == 64 && malformed.typed == nil, "\(malformed.result)")
        #expect(malformed.result.stderr.contains("--passkey takes the six digits the watch shows (000000 to 999999), not \"12345x\""), "\(malformed.result.stderr)")
    }

    @Test func writesGoThroughAnAcquiredSocketWhereBlueZOffersOne() async throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let now = Date(timeIntervalSince1970: 1_762_156_800)
        let records = SleepDataGenerator(seed: 8, timeZone: zone).records(days: 2, lastMorning: now, notAfter: now)
        let simulator = SimulatedWatch(state: SimulatorState(records: records))
        let fake = try await BridgedWatch(simulator: simulator, mtu: 185, offerAcquireWrite: true); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let watch = Watch(transport: BlueZTransport(bluez: bluez, address: "AA:BB:CC:DD:EE:09", adapter: "hci0"))
        try await watch.connect()
        #expect(try await watch.sleepRecords(start: UInt32(records[0].start), end: nil) == records)
        #expect(fake.acquiredWrites > 3, "the frames went through the socket, not WriteValue")
        await watch.disconnect()
    }
}
