import ArgumentParser
import Foundation
import Synchronization
import TSGATT
import Testing
import TSBlueZ
@testable import TSDBus
import TSDevice
import TSFamilies
import TSFamilyKit
import TSGatewayAPI
import TSModels
import TSProtocol
import TSTestSupport
@testable import tsgateway

/// The toy family of `ToyFamilyTests` (its band with a battery and an alarm table over the
/// loopback transport, its simulated band, its own pairing secret `toy-pin`), registered here at
/// run time and driven through tsgateway's own command types as its `main` runs them: `pair`
/// with `--credential toy-pin=…` (a fake bluetoothd bridges the toy band), `info` and `alarms
/// get` over that link and on the simulated band (`--simulate`), `simulate` (the band as a BlueZ
/// peripheral, on the fake bluetoothd) and `serve` with a simulated toy watch on a private bus,
/// stopped by SIGTERM as serve is. Each run that touches buses, signals or standard output runs
/// in an exit test (a child process of this test binary, which registers the toy first), so no
/// other test sees its environment, signal dispositions or output; each is bounded and holds no
/// thread of the cooperative pool while its child runs (`BoundedExitTest`). Nothing outside
/// this target names the toy.
@Suite("a family registered at run time, through the commands", .serialized, .timeLimit(.minutes(3)))
struct ToyFamilyCommandTests {
    static let address = "AA:BB:CC:DD:EE:0A"

    /// The toy's family with its band as a BlueZ peripheral too (`tsgateway simulate --dialect toy`).
    static let family: WatchFamily = {
        var family = ToyFamilyTests.family
        family.peripheral = ToyBandAdvertised.family
        return family
    }()

    /// The toy's one registration for every test of this target, the whole family (dialect,
    /// pin, simulated band, advertised band). Tests of one process run side by side, and a
    /// registration replaces one of the same name: were one test to register less of the toy,
    /// another's simulated band could vanish under it (CI at be34d89: "the toy dialect has no
    /// simulated watch").
    static func register() {
        WatchFamilies.register(family)
    }

    @Test("pair takes the toy's pin as --credential, checked by the toy's rule; info and alarms get reach the paired band")
    func pairInfoAndAlarms() async {
        await BoundedExitTest.run {
            InProcess.report(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { await InProcess.child(ToyFamilyCommandTests.pairInfoAndAlarmsInChild) })
        }
    }

    static func pairInfoAndAlarmsInChild() async throws {
        register()
        let directory = try ToyDialectTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("db.sqlite").path
        let bluetoothd = try await ToyBluetoothd(band: ToyBandPeripheral(battery: 64, alarms: ToyDialectTests.alarms), address: address)
        defer { bluetoothd.stop() }
        InProcess.useBus(bluetoothd.bus.address)

        let paired = await InProcess.run(["pair", address.lowercased(), "--dialect", "toy", "--credential", "toy-pin=0815", "--db", database])
        #expect(paired.status == 0, "\(paired.error)")
        #expect(paired.output == "paired with Toy Band 1 (\(address)), firmware 0.1, speaking toy; it is now the default watch\n")
        #expect(bluetoothd.paired && bluetoothd.trusted, "the Bluetooth bond first")
        #expect(ToyBand.configurationsGiven.contains { $0.pairing && $0.secret == PairingSecret(key: "toy-pin", text: "0815") },
                "pair hands the toy's central the pin it was given")

        // Later commands need no address and no --dialect: the store remembers what pair learned.
        let info = await InProcess.run(["info", "--json", "--db", database])
        #expect(info.status == 0, "\(info.error)")
        let described = try JSONDecoder().decode(InfoJSON.self, from: Data(info.output.utf8))
        #expect(described.watch == address && described.model == "Toy Band 1" && described.dialect == "toy", "\(info.output)")
        #expect(described.battery?.level == 64)

        let alarms = await InProcess.run(["alarms", "get", "--json", "--db", database])
        #expect(alarms.status == 0, "\(alarms.error)")
        #expect(try JSONDecoder().decode(AlarmsJSON.self, from: Data(alarms.output.utf8)).alarms == ToyDialectTests.alarms, "\(alarms.output)")
        let table = await InProcess.run(["alarms", "get", "--db", database])
        #expect(table.status == 0 && table.output.contains("06:30") && table.output.contains("09:05"), "\(table.output)\(table.error)")
    }

    /// Refused while the arguments are checked, before any bus or file is touched: run in this process.
    @Test("a wrong --credential says what is wrong and which names there are, never the value", arguments: [
        (["--dialect", "toy", "--credential", "toy-pin=12a4"], "--credential toy-pin: a toy pin is 4 digits"),
        (["--credential", "toy-pin=4711"], "--credential toy-pin is for a toy band; add --dialect toy"),
        (["--dialect", "toy", "--credential", "toy-pn=4711"], "--credential toy-pn: no dialect this build speaks takes a secret of that name; they take "
            + "auth-code (--dialect npk), auth-key (--dialect huami), toy-pin (--dialect toy)"),
        (["--dialect", "toy", "--credential", "4711"], "--credential takes NAME=VALUE"),
        (["--dialect", "toy", "--credential", "toy-pin=4711", "--auth-code", "4711"], "a watch takes one pairing secret; --auth-code and --credential toy-pin were given"),
    ])
    func wrongCredential(arguments: [String], message: String) async throws {
        Self.register()
        let refused = await InProcess.run(["pair", Self.address] + arguments, capturing: false)
        #expect(refused.status == ExitStatus.usage.rawValue, "\(refused.error)")
        #expect(refused.error.contains(message), "\(refused.error)")
        #expect(!refused.error.contains("12a4") && !refused.error.contains("4711"), "a secret is never printed: \(refused.error)")
        #expect(PersonalDataMask(watch: nil).apply("tsgateway pair \(Self.address) --credential toy-pin=4711").contains("4711") == false,
                "a problem report masks it too")
    }

    @Test("info and alarms get on the simulated toy band (--simulate --dialect toy)")
    func simulated() async {
        await BoundedExitTest.run {
            InProcess.report(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { await InProcess.child(ToyFamilyCommandTests.simulatedInChild) })
        }
    }

    /// What the children that need no fake bluetoothd start with: the toy family registered, a
    /// temporary directory and a private bus (its address given), both gone when `body` ends.
    static func withToyOnPrivateBus(_ body: (_ directory: URL, _ busAddress: String) async throws -> Void) async throws {
        register()
        let directory = try ToyDialectTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = try PrivateBus()
        defer { bus.stop() }
        InProcess.useBus(bus.address)
        try await body(directory, bus.address)
    }

    static func simulatedInChild() async throws {
        try await withToyOnPrivateBus { directory, _ in
            let database = ["--db", directory.appendingPathComponent("db.sqlite").path]

            let info = await InProcess.run(["--simulate", "--dialect", "toy", "info", "--json"] + database)
            #expect(info.status == 0, "\(info.error)")
            let described = try JSONDecoder().decode(InfoJSON.self, from: Data(info.output.utf8))
            #expect(described.model == "Toy Band 1" && described.dialect == "toy" && described.battery?.level == 64, "\(info.output)")

            let alarms = await InProcess.run(["alarms", "get", "--json", "--simulate", "--dialect", "toy"] + database)
            #expect(alarms.status == 0, "\(alarms.error)")
            #expect(try JSONDecoder().decode(AlarmsJSON.self, from: Data(alarms.output.utf8)).alarms == [ToyBandAdvertised.defaultAlarm], "\(alarms.output)")
        }
    }

    @Test("simulate runs the toy band as a BlueZ peripheral that answers a central")
    func simulate() async {
        await BoundedExitTest.run {
            InProcess.report(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { await InProcess.child(ToyFamilyCommandTests.simulateInChild) })
        }
    }

    static func simulateInChild() async throws {
        register()
        let bluetoothd = try await ToyBluetoothd(band: ToyBandPeripheral(battery: 64, alarms: []), address: address)
        defer { bluetoothd.stop() }
        InProcess.useBus(bluetoothd.bus.address)
        // Stopped by Ctrl-C once the central has played, as a person stops it (--duration only
        // as a backstop); ignored until simulate takes it, so one that comes early is not fatal.
        signal(SIGINT, SIG_IGN)
        let running = Task { await InProcess.run(["simulate", "--adapter", "hci1", "--dialect", "toy", "--duration", "30"]) }
        let profile = try #require(ToyBand.dialect.gatt)
        do {
            // simulate registers its application, then its advertisement.
            for _ in 0..<500 where bluetoothd.application == nil || bluetoothd.advertisement == nil {
                try await Task.sleep(for: .milliseconds(10))
            }
            let application = bluetoothd.application
            // What bluetoothd read back: the toy's service and its two characteristics, advertised.
            let (sender, objects) = try #require(application, "simulate registered no GATT application")
            func path(of uuid: String) throws -> String {
                try #require(objects.first { $0.value[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue == uuid }?.key)
            }
            #expect(objects.values.contains { $0[BlueZInterface.gattService]?["UUID"]?.stringValue == profile.service })
            #expect(bluetoothd.advertisement?["ServiceUUIDs"]?.stringArrayValue == [profile.service])
            // Play the central through bluetoothd's side: subscribe, ask for the battery.
            let notify = try path(of: profile.notifyCharacteristic), write = try path(of: profile.writeCharacteristic)
            let values = try await bluetoothd.server.signals(SignalMatch(path: notify, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            _ = try await bluetoothd.server.call(destination: sender, path: notify, interface: BlueZInterface.gattCharacteristic, member: "StartNotify")
            _ = try await bluetoothd.server.call(destination: sender, path: write, interface: BlueZInterface.gattCharacteristic, member: "WriteValue",
                                                 [.bytes([ToyWire.battery]), .properties(["type": .string("command")])])
            var answer: [UInt8]?
            for await signal in values {
                answer = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue
                if answer != nil { break }
            }
            #expect(answer == [0x81, ToyBandAdvertised.battery, 0], "the band's battery answer")
        } catch {
            Issue.record("playing the central: \(error)")
        }
        kill(getpid(), SIGINT)
        let ended = await running.value
        #expect(ended.status == 0, "\(ended.error)")
        #expect(ended.output.contains("simulated toy band advertising on hci1") && ended.output.hasSuffix("stopped\n"), "\(ended.output)")
    }

    @Test("serve takes a simulated toy watch with its pin, serves it on D-Bus, and stops cleanly on SIGTERM")
    func serve() async {
        await BoundedExitTest.run {
            InProcess.report(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { await InProcess.child(ToyFamilyCommandTests.serveInChild) })
        }
    }

    static func serveInChild() async throws {
        try await withToyOnPrivateBus { directory, busAddress in
            let configuration = directory.appendingPathComponent("toy.yaml")
            try Data("""
                database: \(directory.path)/daemon.sqlite
                bus: session
                watches:
                  - simulated: true
                    name: toy
                    dialect: toy
                    toy-pin: "0815"
                """.utf8).write(to: configuration)
            let checked = await InProcess.run(["serve", "--config", configuration.path, "--check"])
            #expect(checked.status == 0 && checked.output.contains("toy (simulated)"), "\(checked.output)\(checked.error)")

            let serving = Task { await InProcess.run(["serve", "--config", configuration.path, "-v"], capturing: false) }
            let observer = try BusConnection(.address(busAddress))
            defer { observer.close() }
            var owned = false
            for _ in 0..<600 where !owned {
                owned = try await observer.nameHasOwner(GatewayBusAPI.busName)
                if !owned { try await Task.sleep(for: .milliseconds(100)) }
            }
            guard owned else {
                Issue.record("serve did not take \(GatewayBusAPI.busName)")
                return
            }
            do {
                let client = GatewayClient(connection: try BusConnection(.address(busAddress)))
                defer { client.close() }
                let served = try await client.watches()
                #expect(served.map(\.name) == ["toy"])
                let watch = client.watch(try #require(served.first).id)
                #expect(try await watch.status().dialect == .toy)
                #expect(try await watch.alarms() == [ToyBandAdvertised.defaultAlarm])
                #expect(try await watch.status().info?.model == "Toy Band 1")
                #expect(ToyBand.configurationsGiven.contains { !$0.pairing && $0.secret == PairingSecret(key: "toy-pin", text: "0815") },
                        "serve hands the toy's central the pin of its configuration")
            } catch {
                Issue.record("asking the served toy watch: \(error)")
            }
            // serve's graceful shutdown: SIGTERM, which its service group has taken by the time the name is owned.
            kill(getpid(), SIGTERM)
            let ended = await serving.value
            #expect(ended.status == 0, "serve should stop cleanly on SIGTERM: \(ended.error)")
            #expect(try await observer.nameHasOwner(GatewayBusAPI.busName) == false, "the name is given up")
        }
    }
}

/// The parts of `info --json` this test reads.
struct InfoJSON: Decodable {
    struct Battery: Decodable { var level: Int }
    var watch: String
    var model: String
    var dialect: String
    var battery: Battery?
}

/// `alarms get --json`.
struct AlarmsJSON: Decodable {
    var watch: String
    var alarms: [Alarm]
}

/// tsgateway's command line run in this process as its `main` runs it: the same parsing, the same
/// command types, a failure turned into the same exit status and message.
enum InProcess {
    struct Outcome {
        var status: Int32
        /// What it printed on standard output.
        var output: String
        /// What `main` would print on standard error for its failure.
        var error: String
    }

    /// The system bus, the session bus and BlueZ's bus all at `address` for this process (an
    /// exit test's child: no other test shares its environment).
    static func useBus(_ address: String) {
        for name in ["DBUS_SYSTEM_BUS_ADDRESS", "DBUS_SESSION_BUS_ADDRESS", "TSGATEWAY_DBUS_ADDRESS"] { setenv(name, address, 1) }
        unsetenv("TSGATEWAY_BUS")
    }

    /// `capturing`: standard output goes to a file meanwhile and comes back as `output`; only
    /// in an exit test's child, whose standard output is its own. In a child, a failure is also
    /// written for the parent (`report`).
    static func run(_ arguments: [String], capturing: Bool = true) async -> Outcome {
        let line = arguments.joined(separator: " ")
        running.change { $0.append(line) }
        defer { running.change { if let index = $0.firstIndex(of: line) { $0.remove(at: index) } } }
        let ran = capturing ? await capturingStandardOutput { await outcome(arguments) } : await outcome(arguments)
        if isChild, ran.status != 0 { tellParent("`tsgateway \(arguments.joined(separator: " "))` exited \(ran.status): \(ran.error)") }
        return ran
    }

    /// Lines a child writes on standard error for its parent begin so.
    static let childMarker = "in the exit test: "
    nonisolated(unsafe) private static var isChild = false
    /// The command lines running now, for the watchdog's message.
    private static let running = Locked<[String]>([])

    private static func tellParent(_ line: String) {
        FileHandle.standardError.write(Data((childMarker + line + "\n").utf8))
    }

    /// An exit test's body: what it throws goes to the parent (`report`), which fails the test
    /// with it. The child still exits 0: a parent gets the child's output only when the exit
    /// condition was met.
    static func child(_ body: () async throws -> Void) async {
        isChild = true
        stopAfter(BoundedExitTest.childLimit)
        do {
            try await body()
        } catch {
            tellParent("threw \(error)")
        }
    }

    private static let watchdogSaid = "did not finish within "

    /// A thread of its own (the child's cooperative pool may be what is stuck) that, after
    /// `limit`, tells the parent which commands were still running, kills the processes this
    /// child started (its buses) and ends the child.
    private static func stopAfter(_ limit: Duration) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: TimeInterval(limit.components.seconds))
            let commands = running.value.map { "`tsgateway \($0)`" }
            tellParent(watchdogSaid + "\(limit) (\(commands.isEmpty ? "no command was running" : "still running: " + commands.joined(separator: ", "))); "
                       + "stopped, with the processes it started")
            for pid in ExitTestChildren.children(of: getpid()) { kill(pid, SIGKILL) }
            // Status 0: a parent reads the child's standard error (the line above) only when the exit condition was met.
            _exit(0)
        }
    }

    /// What the child told its parent (failed commands, a thrown error), as an issue of the
    /// parent's: the child's own issues arrive without their comments.
    /// A child its watchdog stopped also shows the last lines it wrote (serve's log among them).
    static func report(_ result: ExitTest.Result?) {
        let lines = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self).split(separator: "\n")
        let told = lines.filter { $0.hasPrefix(childMarker) }
        guard !told.isEmpty else { return }
        let stopped = told.contains { $0.hasPrefix(childMarker + watchdogSaid) }
        let tail = stopped ? ["its last lines:"] + lines.filter { !$0.hasPrefix(childMarker) }.suffix(40) : []
        Issue.record(Comment(rawValue: (told + tail).joined(separator: "\n")))
    }

    private static func outcome(_ arguments: [String]) async -> Outcome {
        do {
            var command = try TSGateway.parseAsRoot(GlobalOptions.movedAfterSubcommands(arguments))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return Outcome(status: 0, output: "", error: "")
        } catch let failure as CLIFailure {
            return Outcome(status: failure.status.rawValue, output: "", error: failure.message)
        } catch {
            return Outcome(status: TSGateway.exitCode(for: error).rawValue, output: "", error: TSGateway.message(for: error))
        }
    }

    /// Runs `body` with file descriptor 1 on a file of its own, and adds what was written there.
    private static func capturingStandardOutput(_ body: () async -> Outcome) async -> Outcome {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-toy-stdout-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        fflush(nil)
        let saved = dup(1)
        let capture = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        dup2(capture, 1)
        close(capture)
        let outcome = await body()
        fflush(nil)
        dup2(saved, 1)
        close(saved)
        let written = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return outcome.with(output: written)
    }
}

extension InProcess.Outcome {
    func with(output: String) -> InProcess.Outcome {
        var copy = self
        copy.output = output
        return copy
    }
}

/// A fake bluetoothd on a private bus with one adapter (hci0) and one device: the toy band, its
/// service's write characteristic feeding the band and its notifications becoming Value changes.
/// Pairing is Just Works; trusting sets Trusted.
final class ToyBluetoothd: Sendable {
    let bus: PrivateBus
    let server: BusConnection
    private let flags = Locked(["Paired": false, "Trusted": false])
    private let registered = Locked<(application: (sender: String, objects: [String: [String: DBusProperties]])?, advertisement: DBusProperties?)>((nil, nil))

    var paired: Bool { flags.value["Paired"] ?? false }
    var trusted: Bool { flags.value["Trusted"] ?? false }
    /// The GATT application a peripheral registered on hci1, as bluetoothd read it back.
    var application: (sender: String, objects: [String: [String: DBusProperties]])? { registered.value.application }
    /// The advertisement registered on hci1, as bluetoothd read it back.
    var advertisement: DBusProperties? { registered.value.advertisement }

    init(band: ToyBandPeripheral, address: String) async throws {
        let profile = try #require(ToyBand.dialect.gatt)
        bus = try PrivateBus()
        server = try BusConnection(.address(bus.address))
        try await server.requestName(BlueZ.service)
        server.exportObjectManager(at: "/")
        let server = self.server, flags = self.flags
        let device = "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let service = device + "/service0010", write = service + "/char0011", notify = service + "/char0013"
        let mtu: UInt16 = 247
        try server.export(path: "/org/bluez/hci0", interfaces: [DBusInterface(BlueZInterface.adapter, methods: [
            DBusMethod("SetDiscoveryFilter", in: "a{sv}") { _, _ in [] },
            DBusMethod("StartDiscovery") { _, _ in [] },
            DBusMethod("StopDiscovery") { _, _ in [] },
        ], properties: [
            DBusProperty("Address", "s", get: { .string("00:11:22:33:44:55") }), DBusProperty("Powered", "b", get: { .boolean(true) }),
        ])])
        let registered = self.registered
        try server.export(path: "/org/bluez/hci1", interfaces: [
            DBusInterface(BlueZInterface.adapter, properties: [
                DBusProperty("Address", "s", get: { .string("00:11:22:33:44:66") }), DBusProperty("Powered", "b", get: { .boolean(true) }),
            ]),
            DBusInterface(BlueZInterface.gattManager, methods: [
                DBusMethod("RegisterApplication", in: "oa{sv}") { arguments, call in
                    let objects = try await server.managedObjects(destination: call.sender, path: arguments[0].objectPathValue ?? "/")
                    registered.change { $0.application = (call.sender, objects) }
                    return []
                },
                DBusMethod("UnregisterApplication", in: "o") { _, _ in [] },
            ]),
            DBusInterface(BlueZInterface.leAdvertisingManager, methods: [
                DBusMethod("RegisterAdvertisement", in: "oa{sv}") { arguments, call in
                    let properties = try await server.getAllProperties(destination: call.sender, path: arguments[0].objectPathValue ?? "/",
                                                                       interface: BlueZInterface.leAdvertisement)
                    registered.change { $0.advertisement = properties }
                    return []
                },
                DBusMethod("UnregisterAdvertisement", in: "o") { _, _ in [] },
            ]),
        ])
        try server.export(path: BlueZ.managerPath, interfaces: [DBusInterface(BlueZInterface.agentManager, methods: [
            DBusMethod("RegisterAgent", in: "os") { _, _ in [] },
            DBusMethod("RequestDefaultAgent", in: "o") { _, _ in [] },
        ])])
        try server.export(path: device, interfaces: [DBusInterface(BlueZInterface.device, methods: [
            DBusMethod("Disconnect") { _, _ in [] },
            DBusMethod("Pair") { _, _ in flags.change { $0["Paired"] = true }; return [] },
        ], properties: [
            DBusProperty("Address", "s", get: { .string(address) }), DBusProperty("Connected", "b", get: { .boolean(true) }),
            DBusProperty("ServicesResolved", "b", get: { .boolean(true) }),
            DBusProperty("Paired", "b", get: { .boolean(flags.value["Paired"] ?? false) }),
            DBusProperty("Trusted", "b", get: { .boolean(flags.value["Trusted"] ?? false) },
                         set: { value in flags.change { $0["Trusted"] = value.boolValue ?? false } }),
        ])])
        try server.export(path: service, interfaces: [DBusInterface(BlueZInterface.gattService, properties: [
            DBusProperty("UUID", "s", get: { .string(profile.service) }),
        ])])
        try server.export(path: write, interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { arguments, _ in
                await band.centralWrote(arguments[0].byteArrayValue ?? [])
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(profile.writeCharacteristic) }), DBusProperty("Service", "o", get: { .objectPath(service) }),
            DBusProperty("Flags", "as", get: { .strings(["write", "write-without-response"]) }), DBusProperty("MTU", "q", get: { .uint16(mtu) }),
        ])])
        try server.export(path: notify, interfaces: [DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("StartNotify") { _, _ in
                await band.centralConnected(mtu: try ATTMTU(Int(mtu))) { chunk in
                    try? server.emitPropertiesChanged(path: notify, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes(chunk)])
                }
                return []
            },
            DBusMethod("StopNotify") { _, _ in await band.centralDisconnected(); return [] },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(profile.notifyCharacteristic) }), DBusProperty("Service", "o", get: { .objectPath(service) }),
            DBusProperty("Flags", "as", get: { .strings(["notify"]) }), DBusProperty("MTU", "q", get: { .uint16(mtu) }),
        ])])
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

/// The toy band as a real BlueZ peripheral, as a family's module would offer it to `simulate`:
/// its service with the write and notify characteristics, writes feeding the band, its answers
/// becoming Value changes, and an LE advertisement of the service.
enum ToyBandAdvertised {
    static let battery: UInt8 = 71
    static let applicationPath = "/org/tsgateway/toyband"

    /// The simulated watch's default alarm as far as the toy's wire carries it (no label, snooze or remark).
    static let defaultAlarm = Alarm(slot: Alarm.simulatorDefault.slot, hour: Alarm.simulatorDefault.hour, minute: Alarm.simulatorDefault.minute,
                                    isEnabled: Alarm.simulatorDefault.isEnabled, repeatDays: Alarm.simulatorDefault.repeatDays)

    static let family = SimulatedPeripheralFamily(options: []) { session in
        guard let profile = ToyBand.dialect.gatt else { return }
        let band = ToyBandPeripheral(battery: battery, alarms: [.simulatorDefault])
        let bluez = session.bluez
        let notifyPath = Locked<String?>(nil)
        let service = LocalGattService(uuid: profile.service, characteristics: [
            LocalGattCharacteristic(uuid: profile.writeCharacteristic, flags: ["write-without-response", "write"], write: { bytes, _ in await band.centralWrote(bytes) }),
            LocalGattCharacteristic(uuid: profile.notifyCharacteristic, flags: ["notify"], startNotify: {
                await band.centralConnected(mtu: .default) { packet in
                    if let path = notifyPath.value { try? bluez.notify(packet, characteristicAt: path) }
                }
            }),
        ])
        let application = GattApplication(path: applicationPath, services: [service])
        notifyPath.change { $0 = application.characteristicPath(uuid: profile.notifyCharacteristic) }
        let peripheral = BlueZPeripheral(bluez: bluez, adapter: session.adapter, application: application,
                                         advertisement: LEAdvertisement(path: applicationPath + "/advertisement0", serviceUUIDs: [profile.service], localName: "Toy Band 1"))
        try await peripheral.start()
        session.say("simulated toy band advertising on \(session.adapter.name), service \(profile.service)")
        await session.waitForStop()
        await peripheral.stop()
        session.say("stopped")
    }
}

/// A value closures share, behind a lock.
final class Locked<Value: Sendable>: Sendable {
    private let guarded: Mutex<Value>

    init(_ value: Value) { guarded = Mutex(value) }

    var value: Value { guarded.withLock { $0 } }

    func change(_ body: (inout Value) -> Void) { guarded.withLock { body(&$0) } }
}
