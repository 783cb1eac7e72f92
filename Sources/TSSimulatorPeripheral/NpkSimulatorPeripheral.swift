import Foundation
import TSBlueZ
import TSModels
import TSNpkSimulator
import TSProtocol

/// The simulated TopStep (NPK) watch as a real BlueZ peripheral: a GATT application with the
/// dialect's service (frames written to its write characteristic, notified on its notify
/// characteristic) and an LE advertisement carrying the service's UUID. Writes feed
/// `SimulatedNpkWatch`; its chunks become Value changes of the notify characteristic.
public final class NpkSimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/npksimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let bluez: BlueZ
    let simulator: SimulatedNpkWatch
    public let adapter: AdapterInfo
    let profile: GATTProfile
    let name: String
    let chunking: NpkNotificationChunking
    private let lock = NSLock()
    private var peripheral: BlueZPeripheral?
    private var central: DeviceHandle?
    private var reportedMTU: Int?
    private var largestNotification = 0
    private var linkUp = false
    private var disconnectWatcher: Task<Void, Never>?
    /// Called with a line for the operator whenever something about the link happens; set it
    /// before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(bluez: BlueZ, simulator: SimulatedNpkWatch, adapter: AdapterInfo, profile: GATTProfile,
                name: String = "TS-Sim NPK", chunking: NpkNotificationChunking = .multipleNotificationEntry) {
        self.bluez = bluez
        self.simulator = simulator
        self.adapter = adapter
        self.profile = profile
        self.name = name
        self.chunking = chunking
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let simulator = self.simulator
        let notifyUUID = profile.notifyCharacteristic.lowercased()
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            try? self?.registered?.notify(chunk, characteristic: notifyUUID)
            self?.sent(chunk)
        }
        // A link lost by fault injection: the watch's side disconnects the central.
        await simulator.onLinkLoss { [weak self] in
            guard let self, let device = self.lock.withLock({ self.central }) else { return }
            self.report("losing the link mid-sync after \(await simulator.statistics.sleepDaysSent) sleep days (fault injection)")
            try? await self.bluez.disconnect(device)
        }
        let disconnections = try await bluez.disconnections(on: adapter)
        disconnectWatcher = Task { [weak self] in
            for await _ in disconnections {
                guard let self, self.linkEnded() else { continue }
                self.report("the central disconnected")
                await simulator.centralDisconnected()
            }
        }
        let startMTU = ATTMTU.default
        let write = LocalGattCharacteristic(uuid: profile.writeCharacteristic.lowercased(), flags: ["write-without-response", "write"], write: { [weak self] bytes, options in
            // A bonded central keeps its subscription across links: a write on a new link
            // comes without a StartNotify, so the watch's side of the link starts here.
            if let self, self.claimLinkStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
            if let self, let mtu = options.mtu {
                // BlueZ tells a GATT server the link's ATT MTU with each write.
                if let size = try? ATTMTU(self.chunking.effectiveMTU(reported: mtu)) { await simulator.linkMTUChanged(size) }
                if self.noteLink(mtu: mtu, device: options.device) { self.report("the central's writes report ATT MTU \(mtu)") }
            }
            await simulator.centralWrote(bytes)
        })
        let notify = LocalGattCharacteristic(uuid: notifyUUID, flags: ["notify"], startNotify: { [weak self] in
            if let self, self.claimLinkStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
        }, stopNotify: { [weak self] in
            if let self, self.linkEnded() { await simulator.centralDisconnected() }
        })
        let application = GattApplication(path: Self.applicationPath,
                                          services: [LocalGattService(uuid: profile.service.lowercased(), characteristics: [write, notify])])
        let peripheral = BlueZPeripheral(
            bluez: bluez, adapter: adapter, application: application,
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [profile.service.lowercased()],
                                           localName: name, discoverable: true))
        lock.withLock { self.peripheral = peripheral }
        try await peripheral.start { [weak self] event in
            guard let self else { return }
            switch event {
            case .bluetoothdReturned:
                if self.linkEnded() { await simulator.centralDisconnected() }
            case .registeredAgain:
                self.report("bluetoothd restarted: GATT application and advertisement registered again")
            case let .registeringAgainFailed(error):
                self.report("bluetoothd restarted, but registering again failed: \(String(describing: error))")
            }
        }
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        disconnectWatcher?.cancel()
        await registered?.stop()
    }

    private var registered: BlueZPeripheral? { lock.withLock { peripheral } }

    /// Records the MTU and central of a write; true when the MTU is new.
    private func noteLink(mtu: Int, device: DeviceHandle?) -> Bool {
        lock.withLock {
            if let device { central = device }
            guard reportedMTU != mtu else { return false }
            reportedMTU = mtu
            return true
        }
    }

    private func sent(_ chunk: [UInt8]) {
        let newLargest: (size: Int, mtu: Int?)? = lock.withLock {
            guard chunk.count > largestNotification else { return nil }
            largestNotification = chunk.count
            return (chunk.count, reportedMTU)
        }
        if let newLargest { report("largest notification so far: \(newLargest.size) bytes (ATT MTU \(newLargest.mtu.map(String.init) ?? "not reported"))") }
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
}

/// How long the watch's notifications are for a link BlueZ reports at a given ATT MTU.
public enum NpkNotificationChunking: String, Sendable, CaseIterable {
    /// MTU − 3, as TopStep's SDK cuts frames (an ATT Handle Value Notification's room).
    case handleValueNotification = "mtu-3"
    /// MTU − 5: room for one entry of a Multiple Handle Value Notification, which bluetoothd
    /// sends to a BlueZ central and cuts a longer value to (protocol-spec/topstep-npk.md section 4).
    case multipleNotificationEntry = "mtu-5"

    /// The MTU the watch's chunking (`NpkChunking.chunkSize`, MTU − 3) is given.
    public func effectiveMTU(reported mtu: Int) -> Int {
        switch self {
        case .handleValueNotification: mtu
        case .multipleNotificationEntry: mtu - 2
        }
    }
}
