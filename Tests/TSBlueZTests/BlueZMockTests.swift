import TSTestSupport
import Foundation
import Testing
import TSBlueZ
@testable import TSDBus

/// python-dbusmock's bluez5 template (Debian python3-dbusmock) as bluetoothd, on a private bus.
final class MockBlueZ: @unchecked Sendable {
    let bus: PrivateBus
    let control: BusConnection
    private let mock: SpawnedProcess
    static let watchUUID = "54530001-6777-4e3b-9c2a-7473676174e5"
    /// The bluez5 template's control interface (dbusmock's, not BlueZ's).
    static let mockInterface = "org.bluez.Mock"

    init() async throws {
        bus = try PrivateBus()
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        mock = try Spawn.start("/usr/bin/python3", arguments: ["-m", "dbusmock", "--system", "--template", "bluez5"], environment: environment,
                               stdout: .null, stderr: .null)
        control = try BusConnection(.address(bus.address))
        for _ in 0..<300 {
            if try await control.nameHasOwner(BlueZ.service) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard try await control.nameHasOwner(BlueZ.service) else { throw BusTestError("dbusmock's bluez5 template did not start (is python3-dbusmock installed?)") }
    }

    func addAdapter(_ name: String) async throws {
        _ = try await control.call(destination: BlueZ.service, path: BlueZ.managerPath, interface: Self.mockInterface, member: "AddAdapter", [.string(name), .string("gateway")])
    }

    /// Adds a device; with `uuids` it advertises those services and has an RSSI.
    func addDevice(adapter: String, address: String, alias: String, uuids: [String] = [], rssi: Int16 = -60) async throws {
        let reply = try await control.call(destination: BlueZ.service, path: BlueZ.managerPath, interface: Self.mockInterface, member: "AddDevice",
                                           [.string(adapter), .string(address), .string(alias)])
        guard let path = reply.first?.stringValue else { throw BusTestError("AddDevice returned \(reply)") }
        _ = try await control.call(destination: BlueZ.service, path: path, interface: "org.freedesktop.DBus.Mock", member: "UpdateProperties",
                                   [.string(BlueZInterface.device), .properties(["UUIDs": .strings(uuids), "RSSI": .int16(rssi)])])
    }

    /// Plays BlueZ's part after a connect: services resolved, or the link dropped.
    func setDeviceProperties(adapter: String, address: String, _ properties: DBusProperties) async throws {
        let path = "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
        _ = try await control.call(destination: BlueZ.service, path: path, interface: "org.freedesktop.DBus.Mock", member: "UpdateProperties",
                                   [.string(BlueZInterface.device), .properties(properties)])
    }

    /// How many times Device1.Connect was called on the device (dbusmock's call log).
    func connectCalls(address: String, adapter: String = "hci0") async throws -> Int {
        let path = "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let reply = try await control.call(destination: BlueZ.service, path: path, interface: "org.freedesktop.DBus.Mock", member: "GetMethodCalls", [.string("Connect")])
        return reply.first?.arrayValue?.count ?? -1
    }

    func stop() {
        if mock.isRunning {
            mock.signal(SIGKILL)
            mock.wait(timeout: .seconds(3))
        }
        control.close()
        bus.stop()
    }
}

@Suite struct BlueZMockTests {
    @Test func adaptersAreListedAndCanBePoweredOff() async throws {
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        let bluez = BlueZ(bus: try BusConnection(.address(mock.bus.address))); defer { bluez.bus.close() }
        let adapters = try await bluez.adapters()
        #expect(adapters.map(\.name) == ["hci0"])
        #expect(adapters.first?.powered == true)
        let hci0 = try await bluez.adapter("hci0")
        try await bluez.setPowered(false, adapter: hci0)
        #expect(try await bluez.adapter(nil).powered == false)
        await #expect { _ = try await bluez.scan(adapter: try await bluez.adapter("hci0"), serviceUUIDs: [], duration: .seconds(1)) } throws: {
            "\($0)".contains("adapter hci0 is powered off")
        }
        await #expect { _ = try await bluez.adapter("hci7") } throws: { "\($0)".contains("no Bluetooth adapter named hci7") }
    }

    @Test func scanReportsWatchesByServiceUUIDIncludingOnesThatAppearDuringTheScan() async throws {
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", alias: "TS Watch", uuids: [MockBlueZ.watchUUID], rssi: -48)
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:02", alias: "Headphones", uuids: ["0000110b-0000-1000-8000-00805f9b34fb"])
        let bluez = BlueZ(bus: try BusConnection(.address(mock.bus.address))); defer { bluez.bus.close() }
        let devices = try await bluez.scan(adapter: try await bluez.adapter("hci0"), serviceUUIDs: [MockBlueZ.watchUUID], duration: .seconds(4))
        // Well inside the scan even when the mock bluetoothd (a Python process) is slow under load.
        Task {
            try await Task.sleep(for: .milliseconds(100))
            try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:03", alias: "Late Watch", uuids: [MockBlueZ.watchUUID])
        }
        var found: [String: DiscoveredDevice] = [:]
        for await device in devices { found[device.address] = device }
        #expect(found.keys.sorted() == ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:03"])
        #expect(found["AA:BB:CC:DD:EE:01"]?.rssi == -48)
        #expect(found["AA:BB:CC:DD:EE:01"]?.name == "TS Watch")
    }

    @Test func connectWaitsForResolvedServicesAndSkipsAnExistingLink() async throws {
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", alias: "TS Watch", uuids: [MockBlueZ.watchUUID])
        let bluez = BlueZ(bus: try BusConnection(.address(mock.bus.address))); defer { bluez.bus.close() }
        let watch = try await bluez.device(address: "aa:bb:cc:dd:ee:01", adapter: try await bluez.adapter("hci0"))
        Task {
            try await Task.sleep(for: .milliseconds(150))
            try await mock.setDeviceProperties(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", ["ServicesResolved": .boolean(true)])
        }
        try await bluez.connect(watch, timeout: .seconds(10))
        #expect(try await mock.connectCalls(address: "AA:BB:CC:DD:EE:01") == 1)
        #expect(try await bluez.deviceProperties(watch)["ServicesResolved"] == .boolean(true))
        // The mock's Connect does not update its Connected property; BlueZ does, so play that part.
        try await mock.setDeviceProperties(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", ["Connected": .boolean(true)])
        // Connected and resolved already (as after a previous client died): no second Connect.
        try await bluez.connect(watch, timeout: .seconds(1))
        #expect(try await mock.connectCalls(address: "AA:BB:CC:DD:EE:01") == 1)
        try await bluez.pair(watch)
        try await bluez.trust(watch)
        let paired = try await bluez.deviceProperties(watch)
        #expect(paired["Paired"] == .boolean(true))
        #expect(paired["Trusted"] == .boolean(true))
        try await bluez.disconnect(watch)
    }

    @Test func connectFailsClearlyWhenTheLinkDropsTheServicesNeverResolveOrTheDeviceIsUnknown() async throws {
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", alias: "TS Watch")
        let bluez = BlueZ(bus: try BusConnection(.address(mock.bus.address))); defer { bluez.bus.close() }
        let adapter = try await bluez.adapter("hci0")
        let watch = try await bluez.device(address: "AA:BB:CC:DD:EE:01", adapter: adapter)
        // The link drops after each Connect, before the services resolve: connected once more,
        // then the error. (The mock's Connect leaves Connected alone; BlueZ's part is played here.)
        Task {
            for call in 1...2 {
                while try await mock.connectCalls(address: "AA:BB:CC:DD:EE:01") < call { try await Task.sleep(for: .milliseconds(20)) }
                try await mock.setDeviceProperties(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", ["Connected": .boolean(true)])
                try await mock.setDeviceProperties(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", ["Connected": .boolean(false)])
            }
        }
        await #expect { try await bluez.connect(watch, timeout: .seconds(10)) } throws: { "\($0)" == "AA:BB:CC:DD:EE:01 disconnected while connecting" }
        #expect(try await mock.connectCalls(address: "AA:BB:CC:DD:EE:01") == 2)
        try await mock.setDeviceProperties(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", ["Connected": .boolean(true), "ServicesResolved": .boolean(false)])
        await #expect { try await bluez.connect(watch, timeout: .milliseconds(300)) } throws: { "\($0)".contains("did not finish connecting in time") }
        await #expect { _ = try await bluez.device(address: "11:22:33:44:55:66", adapter: adapter) } throws: { "\($0)".contains("no device 11:22:33:44:55:66 is known to BlueZ") }
    }

    @Test func withoutBluetoothdTheErrorSaysSo() async throws {
        let bus = try PrivateBus(); defer { bus.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(bus.address))); defer { bluez.bus.close() }
        await #expect { _ = try await bluez.adapters() } throws: { "\($0)".contains("bluetoothd is not running on the system bus") }
    }

    /// `scan --count N` ends once N devices are printed: two watches are there, one is printed and the
    /// scan ends (a scan of its whole --timeout, 600 s, would run into the runner's 120 s and fail).
    @Test func theCLIScanEndsOnceItFoundCountDevices() async throws {
        _ = try CLI.requireBinary()
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", alias: "TS Watch", uuids: [MockBlueZ.watchUUID])
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:02", alias: "Second Watch", uuids: [MockBlueZ.watchUUID])
        let scanned = try await CLI.runOnceDetached(["scan", "--count", "1", "--timeout", "600", "--json"], environment: ["TSGATEWAY_DBUS_ADDRESS": mock.bus.address])
        #expect(scanned.status == 0, "\(scanned.stderr)")
        let lines = scanned.stdout.split(separator: "\n")
        #expect(lines.count == 1, "scan --count 1 printed \(lines.count) devices: \(scanned.stdout)")
        #expect(lines.first?.contains("AA:BB:CC:DD:EE:0") == true)
        let refused = try await CLI.runOnceDetached(["scan", "--count", "0"], environment: ["TSGATEWAY_DBUS_ADDRESS": mock.bus.address])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--count must be 1 or more, got 0"))
    }

    @Test func theCLIListsAdaptersAndExplainsAMissingBluetoothd() async throws {
        _ = try CLI.requireBinary()
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        let listed = try await CLI.runOnceDetached(["adapter", "list"], environment: ["TSGATEWAY_DBUS_ADDRESS": mock.bus.address])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("hci0") && listed.stdout.contains("on"))
        let bare = try PrivateBus(); defer { bare.stop() }
        for arguments in [["adapter", "list"], ["scan", "--timeout", "1"]] {
            let result = try await CLI.runOnceDetached(arguments, environment: ["TSGATEWAY_DBUS_ADDRESS": bare.address])
            #expect(result.status == 69)
            #expect(result.stderr == "tsgateway: bluetoothd is not running on the system bus; start it with `sudo systemctl start bluetooth`\n")
        }
    }
}
