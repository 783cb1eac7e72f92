import TSSimulatedHistory
import TSTestSupport
import Foundation
import Testing
import TSBlueZ
import TSGATT
import TSModels
import TSProtocol
import TSSimulator
import TSProtocolV1Peripheral
import TSSimulatorPeripheral
@testable import TSDBus

/// A fake bluetoothd with GattManager1 and LEAdvertisingManager1 that, like the real one, reads
/// the registered application's objects and the advertisement's properties back over D-Bus.
final class FakePeripheralManager: @unchecked Sendable {
    let bus: PrivateBus
    let server: BusConnection
    private let lock = NSLock()
    private(set) var application: (sender: String, objects: [String: [String: DBusProperties]])?
    private(set) var advertisement: DBusProperties?
    private(set) var applicationRegistrations = 0
    private(set) var advertisementRegistrations = 0
    /// Answer RegisterApplication with AlreadyExists, as bluetoothd does for a path it already has.
    var applicationAlreadyExists: Bool {
        get { lock.withLock { alreadyExists } }
        set { lock.withLock { alreadyExists = newValue } }
    }
    private var alreadyExists = false

    init() async throws {
        bus = try PrivateBus()
        server = try BusConnection(.address(bus.address))
        try await server.requestName(BlueZ.service)
        server.exportObjectManager(at: "/")
        let server = self.server
        try server.export(path: "/org/bluez/hci1", interfaces: [
            DBusInterface(BlueZInterface.adapter, properties: [
                DBusProperty("Address", "s", get: { .string("00:AA:BB:CC:DD:01") }), DBusProperty("Powered", "b", get: { .boolean(true) }),
            ]),
            DBusInterface(BlueZInterface.gattManager, methods: [
                DBusMethod("RegisterApplication", in: "oa{sv}") { [weak self] arguments, call in
                    if self?.applicationAlreadyExists == true { throw BusError(name: BlueZErrorName.alreadyExists, message: "Already Exists") }
                    let root = arguments[0].objectPathValue ?? "/"
                    let objects = try await server.managedObjects(destination: call.sender, path: root)
                    self?.record(application: (call.sender, objects))
                    return []
                },
                DBusMethod("UnregisterApplication", in: "o") { _, _ in [] },
            ]),
            DBusInterface(BlueZInterface.leAdvertisingManager, methods: [
                DBusMethod("RegisterAdvertisement", in: "oa{sv}") { [weak self] arguments, call in
                    let properties = try await server.getAllProperties(destination: call.sender, path: arguments[0].objectPathValue ?? "/", interface: BlueZInterface.leAdvertisement)
                    self?.record(advertisement: properties)
                    return []
                },
                DBusMethod("UnregisterAdvertisement", in: "o") { _, _ in [] },
            ]),
        ])
    }

    func record(application value: (String, [String: [String: DBusProperties]])) {
        lock.withLock { application = value; applicationRegistrations += 1 }
    }

    func record(advertisement value: DBusProperties) {
        lock.withLock { advertisement = value; advertisementRegistrations += 1 }
    }

    /// bluetoothd restarting as a client sees it: the name leaves the bus and comes back.
    func restartBluetoothd() async throws {
        _ = try await server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                  member: "ReleaseName", [.string(BlueZ.service)])
        try await server.requestName(BlueZ.service)
    }

    func stop() {
        server.close()
        bus.stop()
    }
}

@Suite struct SimulatorPeripheralTests {
    @Test func theSimulatorRegistersItsGattApplicationAndAdvertisementAndAnswersACentral() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let peripheral = SimulatorPeripheral(bluez: bluez, simulator: SimulatedWatch(), adapter: try await bluez.adapter("hci1"))
        try await peripheral.start(mtu: 185)

        // What bluetoothd read back: one primary service with the write and notify characteristics.
        let objects = try #require(fake.application?.objects)
        let uuids = Set(objects.values.compactMap { $0[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue })
        #expect(uuids == [WatchGATT.writeCharacteristic, WatchGATT.notifyCharacteristic])
        #expect(objects.values.contains { $0[BlueZInterface.gattService]?["UUID"]?.stringValue == WatchGATT.service })
        let advertisement = try #require(fake.advertisement)
        #expect(advertisement["ServiceUUIDs"]?.stringArrayValue == [WatchGATT.service])
        #expect(advertisement["Type"]?.stringValue == "peripheral")
        #expect(advertisement["LocalName"]?.stringValue == "TS-Sim W10")

        // Play the central through bluetoothd's side: enable notifications, write a HELLO.
        let sender = try #require(fake.application?.sender)
        let notifyPath = try #require(objects.first { $0.value[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue == WatchGATT.notifyCharacteristic }?.key)
        let writePath = try #require(objects.first { $0.value[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue == WatchGATT.writeCharacteristic }?.key)
        let values = try await fake.server.signals(SignalMatch(path: notifyPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await fake.server.call(destination: sender, path: notifyPath, interface: BlueZInterface.gattCharacteristic, member: "StartNotify")
        let hello = try Message.helloRequest(HelloRequest(attMTU: 185)).frame(sequence: 0).encoded()
        _ = try await fake.server.call(destination: sender, path: writePath, interface: BlueZInterface.gattCharacteristic, member: "WriteValue",
                                       [.bytes(hello), .properties(["type": .string("command")])])
        var reassembler = FrameReassembler()
        var answer: Message?
        for await signal in values {
            guard let chunk = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue else { continue }
            for case let .frame(frame) in reassembler.append(chunk, at: .zero) { answer = try Message(frame: frame) }
            if answer != nil { break }
        }
        guard case let .helloResponse(response)? = answer else { Issue.record("no HELLO response, got \(String(describing: answer))"); return }
        #expect(response.commands.contains(CommandID.sleepQuery.rawValue))
        await peripheral.stop()
    }

    @Test func theWatchFragmentsToTheMTUBlueZReportsAndStartsAgainOnAWriteAfterADisconnect() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let central = "/org/bluez/hci1/dev_00_AA_BB_CC_DD_02"
        try fake.server.export(path: central, interfaces: [DBusInterface(BlueZInterface.device, properties: [
            DBusProperty("Address", "s", get: { .string("00:AA:BB:CC:DD:02") }), DBusProperty("Connected", "b", get: { .boolean(true) }),
        ])])
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let peripheral = SimulatorPeripheral(bluez: bluez, simulator: SimulatedWatch(), adapter: try await bluez.adapter("hci1"))
        try await peripheral.start(mtu: 247)
        let objects = try #require(fake.application?.objects)
        let sender = try #require(fake.application?.sender)
        let notifyPath = try #require(objects.first { $0.value[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue == WatchGATT.notifyCharacteristic }?.key)
        let writePath = try #require(objects.first { $0.value[BlueZInterface.gattCharacteristic]?["UUID"]?.stringValue == WatchGATT.writeCharacteristic }?.key)
        _ = try await fake.server.call(destination: sender, path: notifyPath, interface: BlueZInterface.gattCharacteristic, member: "StartNotify")

        // BlueZ reports the link's MTU (here 30) with each write: chunks are MTU − 5 = 25 bytes at most.
        // Returns the notification chunks up to the HELLO response, or what came within 5 s.
        func hello() async throws -> [[UInt8]] {
            let values = try await fake.server.signals(SignalMatch(path: notifyPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            let bytes = try Message.helloRequest(HelloRequest(attMTU: 247)).frame(sequence: 0).encoded()
            _ = try await fake.server.call(destination: sender, path: writePath, interface: BlueZInterface.gattCharacteristic, member: "WriteValue",
                                           [.bytes(bytes), .properties(["type": .string("command"), "mtu": .uint16(30), "device": .objectPath(central)])])
            return await withTaskGroup(of: [[UInt8]]?.self) { group in
                group.addTask {
                    var reassembler = FrameReassembler()
                    var chunks: [[UInt8]] = []
                    for await signal in values {
                        guard let chunk = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue else { continue }
                        chunks.append(chunk)
                        for case let .frame(frame) in reassembler.append(chunk, at: .zero) {
                            if case .helloResponse? = try? Message(frame: frame) { return chunks }
                        }
                    }
                    return chunks
                }
                group.addTask { try? await Task.sleep(for: .seconds(5)); return nil }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first ?? []
            }
        }
        let first = try await hello()
        #expect(first.count > 1 && first.allSatisfy { $0.count <= 25 } && first.contains { $0.count == 25 }, "\(first.map(\.count))")

        // The central's link drops (no StopNotify: a bonded central keeps its subscription), then
        // it writes on a new link: the watch answers again.
        try fake.server.emitPropertiesChanged(path: central, interface: BlueZInterface.device, changed: ["Connected": .boolean(false)])
        try await Task.sleep(for: .milliseconds(200))
        let second = try await hello()
        #expect(!second.isEmpty)
        await peripheral.stop()
    }

    /// The GATT objects bluetoothd read back, by UUID: each characteristic's path, flags and service UUID.
    static func characteristics(in objects: [String: [String: DBusProperties]]) -> [String: (path: String, flags: [String], service: String?)] {
        var found: [String: (path: String, flags: [String], service: String?)] = [:]
        for (path, interfaces) in objects {
            guard let characteristic = interfaces[BlueZInterface.gattCharacteristic], let uuid = characteristic["UUID"]?.stringValue else { continue }
            let servicePath = characteristic["Service"]?.objectPathValue
            let service = servicePath.flatMap { objects[$0]?[BlueZInterface.gattService]?["UUID"]?.stringValue }
            found[uuid] = (path, characteristic["Flags"]?.stringArrayValue ?? [], service)
        }
        return found
    }

    @Test(.timeLimit(.minutes(1))) func theSimulatorServesDeviceInformationBatteryAndAHeartRateFollowingItsNight() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let morning = Date(timeIntervalSince1970: 1_763_535_600)   // 2025-11-19 07:00 UTC
        let records = SleepDataGenerator(seed: 7, timeZone: TimeZone(identifier: "UTC")!).records(days: 3, lastMorning: morning, notAfter: morning)
        // Half an hour of the night a beat, so a few beats cross several stages.
        let night = NightReplay(records: records, secondsPerBeat: 1_800)
        let standard = SimulatedStandardServices()
        let peripheral = SimulatorPeripheral(bluez: bluez, simulator: SimulatedWatch(), adapter: try await bluez.adapter("hci1"),
                                             standard: standard, night: night, heartbeat: .milliseconds(20))
        let reports = Reports()
        peripheral.report = { reports.add($0) }
        try await peripheral.start()

        // The services and characteristics bluetoothd read back, with BlueZ's flags.
        let objects = try #require(fake.application?.objects)
        let serviceUUIDs = Set(objects.values.compactMap { $0[BlueZInterface.gattService]?["UUID"]?.stringValue })
        #expect(serviceUUIDs == [WatchGATT.service, bluetoothBaseUUID(0x180A), bluetoothBaseUUID(0x180F), bluetoothBaseUUID(0x180D)])
        let found = Self.characteristics(in: objects)
        var expected: [String: ([String], String)] = [
            WatchGATT.writeCharacteristic: (["write", "write-without-response"], WatchGATT.service),
            WatchGATT.notifyCharacteristic: (["notify"], WatchGATT.service),
            bluetoothBaseUUID(0x2A19): (["read", "notify"], bluetoothBaseUUID(0x180F)),
            bluetoothBaseUUID(0x2A37): (["notify"], bluetoothBaseUUID(0x180D)),
            bluetoothBaseUUID(0x2A38): (["read"], bluetoothBaseUUID(0x180D)),
        ]
        for short: UInt16 in [0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28] { expected[bluetoothBaseUUID(short)] = (["read"], bluetoothBaseUUID(0x180A)) }
        #expect(Set(found.keys) == Set(expected.keys))
        for (uuid, (flags, service)) in expected {
            #expect(found[uuid]?.flags == flags, "flags of \(uuid)")
            #expect(found[uuid]?.service == service, "service of \(uuid)")
        }

        // Reads, as bluetoothd makes them for a central.
        let sender = try #require(fake.application?.sender)
        func read(_ short: UInt16) async throws -> [UInt8]? {
            let path = try #require(found[bluetoothBaseUUID(short)]?.path)
            return try await fake.server.call(destination: sender, path: path, interface: BlueZInterface.gattCharacteristic, member: "ReadValue", [.properties([:])]).first?.byteArrayValue
        }
        let information = SimulatedStandardServices.defaultInformation
        #expect(try await read(0x2A29) == Array((information.manufacturer ?? "").utf8))
        #expect(try await read(0x2A24) == Array("TS-Sim W10".utf8))
        #expect(try await read(0x2A26) == Array((information.firmwareRevision ?? "").utf8))
        #expect(try await read(0x2A19) == [82])
        #expect(try await read(0x2A38) == [BodySensorLocation.wrist.rawValue])

        // A Battery Level change reaches bluetoothd as a Value change.
        let batteryPath = try #require(found[bluetoothBaseUUID(0x2A19)]?.path)
        let batteryValues = try await fake.server.signals(SignalMatch(path: batteryPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        await standard.setBatteryLevel(40)
        var batteryIterator = batteryValues.makeAsyncIterator()
        #expect(await batteryIterator.next()?.arguments[1].propertiesValue?["Value"]?.byteArrayValue == [40])

        // Subscribed, the heart beats: each measurement is the rate of the stage the replayed night has reached.
        let heartRatePath = try #require(found[bluetoothBaseUUID(0x2A37)]?.path)
        let heartRateValues = try await fake.server.signals(SignalMatch(path: heartRatePath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await fake.server.call(destination: sender, path: heartRatePath, interface: BlueZInterface.gattCharacteristic, member: "StartNotify")
        var measurements: [HeartRateMeasurement] = []
        for await signal in heartRateValues {
            guard let value = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue else { continue }
            measurements.append(try HeartRateMeasurement(value: value))
            if measurements.count == 8 { break }
        }
        _ = try await fake.server.call(destination: sender, path: heartRatePath, interface: BlueZInterface.gattCharacteristic, member: "StopNotify")
        let stages = (0..<8).map { night.stage(atBeat: $0) }
        #expect(measurements.map(\.bpm) == stages.enumerated().map { SimulatedStandardServices.heartRate(in: $1, beat: $0) })
        #expect(Set(stages).count > 1, "the replayed night should pass through several stages: \(stages)")
        #expect(measurements.allSatisfy { $0.sensorContact == .detected && $0.rrIntervals.count == 1 })
        #expect(reports.lines.contains { $0.hasPrefix("a central subscribed to Heart Rate Measurement") })
        #expect(reports.lines.contains("Heart Rate Measurement unsubscribed"))
        await peripheral.stop()
    }

    @Test func theSimulateCommandServesTheStandardServicesUnlessToldNotTo() async throws {
        _ = try CLI.requireBinary()
        for (arguments, services) in [([String](), "protocol v1, Device Information, Battery, Heart Rate"), (["--no-standard-services"], "protocol v1 only")] {
            let fake = try await FakePeripheralManager(); defer { fake.stop() }
            let result = try await CLI.runOnceDetached(["simulate", "--adapter", "hci1", "--days", "7", "--duration", "1"] + arguments, environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("serves \(services);"), "\(result.stdout)")
            let objects = try #require(fake.application?.objects)
            let serviceUUIDs = Set(objects.values.compactMap { $0[BlueZInterface.gattService]?["UUID"]?.stringValue })
            let standard: Set = [bluetoothBaseUUID(0x180A), bluetoothBaseUUID(0x180F), bluetoothBaseUUID(0x180D)]
            #expect(serviceUUIDs == (arguments.isEmpty ? standard.union([WatchGATT.service]) : [WatchGATT.service]))
            // The advertisement carries protocol v1's UUID either way (what `tsgateway scan` looks for).
            #expect(fake.advertisement?["ServiceUUIDs"]?.stringArrayValue == [WatchGATT.service])
        }
    }

    @Test func theSimulateCommandAdvertisesUntilItsDurationEnds() async throws {
        _ = try CLI.requireBinary()
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let result = try await CLI.runOnceDetached(["simulate", "--adapter", "hci1", "--days", "7", "--duration", "1"], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("simulated watch advertising on hci1 (00:AA:BB:CC:DD:01)"))
        #expect(result.stdout.hasSuffix("stopped\n"))
        #expect(fake.advertisement?["ServiceUUIDs"]?.stringArrayValue == [WatchGATT.service])
        #expect(fake.application?.objects.isEmpty == false)
        let missing = try await CLI.runOnceDetached(["simulate", "--adapter", "hci4", "--duration", "1"], environment: ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(missing.status == 69)
        #expect(missing.stderr.contains("no Bluetooth adapter named hci4"))
    }
}

/// The operator lines a peripheral reported.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []
    func add(_ line: String) { lock.withLock { collected.append(line) } }
    var lines: [String] { lock.withLock { collected } }
}
