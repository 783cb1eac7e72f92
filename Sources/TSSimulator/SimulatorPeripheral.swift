import Foundation
import TSBlueZ
import TSDBus
import TSProtocol

/// The simulated watch as a real BlueZ peripheral: a GATT application with the wire protocol's
/// service (GattManager1.RegisterApplication) and an LE advertisement carrying its UUID
/// (LEAdvertisingManager1.RegisterAdvertisement). Writes from a central feed the simulator; its
/// notifications become Value changes of the notify characteristic.
public final class SimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/simulator"
    static let servicePath = applicationPath + "/service0"
    static let writePath = servicePath + "/char0"
    static let notifyPath = servicePath + "/char1"
    static let advertisementPath = applicationPath + "/advertisement0"
    static let multipleNotificationOverhead = 2

    let bluez: BlueZ
    let simulator: SimulatedWatch
    public let adapter: AdapterInfo
    let name: String
    /// The service UUID put in the advertisement (the GATT service keeps the protocol's).
    let advertisedService: String
    /// Drop the link from the watch's side once the central has acknowledged this many sleep
    /// pages (once per run), so the drop lands mid-transfer with some records stored.
    let dropLinkAfterPages: Int?
    private let lock = NSLock()
    private var notifying = false
    private var central: String?
    private var linkStatistics = LinkStatistics()
    private var dropped = false
    private var linkUp = false
    private var disconnectWatcher: Task<Void, Never>?
    private var restartWatcher: Task<Void, Never>?
    /// Called with a line for the operator whenever something about the link happens; set it
    /// before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    /// What the peripheral saw: the MTU BlueZ last reported and the largest notification sent.
    struct LinkStatistics {
        var mtu: Int?
        var largestNotification = 0
    }

    public init(bluez: BlueZ, simulator: SimulatedWatch, adapter: AdapterInfo, name: String = "TS-Sim W10",
                advertisedService: String = WatchGATT.service, dropLinkAfterPages: Int? = nil) {
        self.bluez = bluez
        self.simulator = simulator
        self.adapter = adapter
        self.name = name
        self.advertisedService = advertisedService
        self.dropLinkAfterPages = dropLinkAfterPages
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start(mtu: Int = 247) async throws {
        let bus = bluez.bus
        let simulator = self.simulator
        let attMTU = (try? ATTMTU(mtu)) ?? .default
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            try? bus.emitPropertiesChanged(path: Self.notifyPath, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes(chunk)])
            await self?.sent(chunk)
        }
        // The watch's side of a link ends when BlueZ reports the central disconnected.
        let changes = try await bus.signals(SignalMatch(sender: BlueZ.service, pathNamespace: adapter.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        disconnectWatcher = Task { [weak self] in
            for await signal in changes where signal.arguments.first?.stringValue == "org.bluez.Device1" && signal.arguments.count > 1 {
                guard signal.arguments[1].propertiesValue?["Connected"]?.boolValue == false, let self, self.linkEnded() else { continue }
                self.report("the central disconnected")
                await simulator.centralDisconnected()
            }
        }
        bus.exportObjectManager(at: Self.applicationPath)
        try bus.export(path: Self.servicePath, interfaces: [DBusInterface("org.bluez.GattService1", properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.service) }), DBusProperty("Primary", "b", get: { .boolean(true) }),
        ])])
        try bus.export(path: Self.writePath, interfaces: [DBusInterface("org.bluez.GattCharacteristic1", methods: [
            DBusMethod("WriteValue", in: "aya{sv}") { [weak self] arguments, _ in
                // A bonded central keeps its subscription across links: a write on a new link
                // comes without a StartNotify, so the watch's side of the link starts here.
                if let self, self.claimLinkStart() { await simulator.centralConnected(mtu: attMTU, send: send) }
                let options = arguments.count > 1 ? arguments[1].propertiesValue ?? [:] : [:]
                if let self, let mtu = options["mtu"]?.uint16Value {
                    // BlueZ tells a GATT server the link's ATT MTU with each write; fragment to it,
                    // less the 2 bytes a Multiple Handle Value Notification entry adds (BlueZ
                    // batches notifications that way on EATT and cuts longer values).
                    if let attMTU = try? ATTMTU(Int(mtu) - Self.multipleNotificationOverhead) { await simulator.linkMTUChanged(attMTU) }
                    if self.noteLink(mtu: Int(mtu), device: options["device"]?.objectPathValue) { self.report("the central's writes report ATT MTU \(mtu)") }
                }
                await simulator.centralWrote(arguments[0].byteArrayValue ?? [])
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.writeCharacteristic) }),
            DBusProperty("Service", "o", get: { .objectPath(Self.servicePath) }),
            DBusProperty("Flags", "as", get: { .strings(["write", "write-without-response"]) }),
        ])])
        try bus.export(path: Self.notifyPath, interfaces: [DBusInterface("org.bluez.GattCharacteristic1", methods: [
            DBusMethod("StartNotify") { [weak self] _, _ in
                self?.setNotifying(true)
                _ = self?.claimLinkStart()
                await simulator.centralConnected(mtu: attMTU, send: send)
                return []
            },
            DBusMethod("StopNotify") { [weak self] _, _ in
                self?.setNotifying(false)
                self?.linkEnded()
                await simulator.centralDisconnected()
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", get: { .string(WatchGATT.notifyCharacteristic) }),
            DBusProperty("Service", "o", get: { .objectPath(Self.servicePath) }),
            DBusProperty("Flags", "as", get: { .strings(["notify"]) }),
            DBusProperty("Notifying", "b", get: { [weak self] in .boolean(self?.isNotifying ?? false) }),
        ])])
        let name = self.name
        let advertisedService = self.advertisedService
        try bus.export(path: Self.advertisementPath, interfaces: [DBusInterface("org.bluez.LEAdvertisement1", methods: [
            DBusMethod("Release") { _, _ in [] },
        ], properties: [
            DBusProperty("Type", "s", get: { .string("peripheral") }),
            DBusProperty("ServiceUUIDs", "as", get: { [advertisedService] in .strings([advertisedService]) }),
            DBusProperty("LocalName", "s", get: { .string(name) }),
            DBusProperty("Discoverable", "b", get: { .boolean(true) }),
        ])])
        try await register()
        // A watch keeps advertising whatever happens to the gateway's stack: when bluetoothd
        // comes back, register again (its registrations died with it).
        let owners = try await bus.signals(SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        restartWatcher = Task { [weak self] in
            for await signal in owners where signal.arguments.count == 3 && signal.arguments[0].stringValue == BlueZ.service {
                guard let self, let owner = signal.arguments[2].stringValue, !owner.isEmpty else { continue }
                if self.linkEnded() { await simulator.centralDisconnected() }
                await self.registerAgain()
            }
        }
    }

    /// Registers the exported application and advertisement with BlueZ. AlreadyExists counts
    /// as done: a retry after a half-finished registration meets the half that went through.
    func register() async throws {
        let bus = bluez.bus
        for (interface, member, path) in [("org.bluez.GattManager1", "RegisterApplication", Self.applicationPath),
                                          ("org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", Self.advertisementPath)] {
            do {
                _ = try await bus.call(destination: BlueZ.service, path: adapter.path, interface: interface, member: member,
                                       [.objectPath(path), .properties([:])], timeout: .seconds(10))
            } catch let error as BusError where error.name == "org.bluez.Error.AlreadyExists" {
                continue
            } catch let error as BusError {
                throw BlueZError.from(error, adapter: adapter.name)
            }
        }
    }

    /// After bluetoothd restarted: its adapters take a moment to appear, so try for 30 s.
    private func registerAgain() async {
        var lastError: (any Error)?
        for _ in 0..<60 {
            do {
                try await register()
                report("bluetoothd restarted: GATT application and advertisement registered again")
                return
            } catch {
                lastError = error
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        report("bluetoothd restarted, but registering again failed: \(lastError.map { String(describing: $0) } ?? "no answer")")
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        disconnectWatcher?.cancel()
        restartWatcher?.cancel()
        let bus = bluez.bus
        _ = try? await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.LEAdvertisingManager1", member: "UnregisterAdvertisement",
                                [.objectPath(Self.advertisementPath)], timeout: .seconds(5))
        _ = try? await bus.call(destination: BlueZ.service, path: adapter.path, interface: "org.bluez.GattManager1", member: "UnregisterApplication",
                                [.objectPath(Self.applicationPath)], timeout: .seconds(5))
        for path in [Self.advertisementPath, Self.notifyPath, Self.writePath, Self.servicePath] { bus.unexport(path: path) }
    }

    /// Records the MTU and central of a write; true when the MTU is new for this link.
    private func noteLink(mtu: Int, device: String?) -> Bool {
        lock.lock(); defer { lock.unlock() }
        if let device { central = device }
        guard linkStatistics.mtu != mtu else { return false }
        linkStatistics.mtu = mtu
        return true
    }

    private func sent(_ chunk: [UInt8]) async {
        let newLargest: (size: Int, mtu: Int?)? = lock.withLock {
            guard chunk.count > linkStatistics.largestNotification else { return nil }
            linkStatistics.largestNotification = chunk.count
            return (chunk.count, linkStatistics.mtu)
        }
        // BlueZ keeps a bonded central's subscription across links, so there is no per-link
        // StartNotify to hang statistics on; a new largest size is reported as it happens.
        if let newLargest { report("largest notification so far: \(newLargest.size) bytes (ATT MTU \(newLargest.mtu.map(String.init) ?? "not reported"))") }
        guard let limit = dropLinkAfterPages, await simulator.statistics.pagesAcknowledged >= limit else { return }
        let device: String? = lock.withLock {
            if dropped { return nil }
            dropped = true
            return central
        }
        guard let device else { return }
        report("dropping the link after \(limit) acknowledged sleep pages (fault injection)")
        _ = try? await bluez.bus.call(destination: BlueZ.service, path: device, interface: "org.bluez.Device1", member: "Disconnect", timeout: .seconds(10))
    }

    /// True for the first caller after the link went down (or at start).
    private func claimLinkStart() -> Bool {
        lock.withLock {
            if linkUp { return false }
            linkUp = true
            return true
        }
    }

    /// True when the link was up.
    @discardableResult
    private func linkEnded() -> Bool {
        lock.withLock {
            defer { linkUp = false }
            return linkUp
        }
    }

    private func setNotifying(_ on: Bool) { lock.lock(); notifying = on; lock.unlock() }
    var isNotifying: Bool { lock.lock(); defer { lock.unlock() }; return notifying }
}
