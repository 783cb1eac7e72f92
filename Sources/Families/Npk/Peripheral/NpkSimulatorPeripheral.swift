import Foundation
import TSBlueZ
import TSGATT
import TSModels
import TSNpkSimulator
import TSSimulatorPeripheral
import TSTransport

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
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public let answers: TimedNotifications
    private let lock = NSLock()
    private var peripheral: BlueZPeripheral?
    private let link = PeripheralLink()
    private var disconnectWatcher: Task<Void, Never>?
    /// Called with a line for the operator whenever something about the link happens; set it
    /// before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(bluez: BlueZ, simulator: SimulatedNpkWatch, adapter: AdapterInfo, profile: GATTProfile,
                name: String = "TS-Sim NPK", chunking: NpkNotificationChunking = .multipleNotificationEntry,
                answerTiming: AnswerTiming = .immediate) {
        self.bluez = bluez
        self.simulator = simulator
        self.adapter = adapter
        self.profile = profile
        self.name = name
        self.chunking = chunking
        answers = TimedNotifications(answerTiming)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let simulator = self.simulator
        let link = self.link
        link.report(to: report)
        let notifyUUID = profile.notifyCharacteristic.lowercased()
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            self?.answers.send { [weak self] in
                try? self?.registered?.notify(chunk, characteristic: notifyUUID)
                link.sent(chunk.count)
            }
        }
        // A link lost by fault injection: the watch's side disconnects the central, after the
        // answers it made before (with late answers, they are still on their way).
        await simulator.onLinkLoss { [weak self] in
            guard let self else { return }
            let days = await simulator.statistics.sleepDaysSent
            self.answers.send { [weak self] in
                Task { [weak self] in
                    guard let self, let device = link.central else { return }
                    self.report("losing the link mid-sync after \(days) sleep days (fault injection)")
                    try? await self.bluez.disconnect(device)
                }
            }
        }
        disconnectWatcher = try await link.watchDisconnections(bluez: bluez, adapter: adapter) { await simulator.centralDisconnected() }
        let startMTU = ATTMTU.default
        let write = LocalGattCharacteristic(uuid: profile.writeCharacteristic.lowercased(), flags: answers.timing.answeringWriteFlags(centralWrites: profile.writeMode), write: { [weak self] bytes, options in
            // A bonded central keeps its subscription across links: a write on a new link
            // comes without a StartNotify, so the watch's side of the link starts here.
            if link.claimStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
            if let self, let mtu = options.mtu {
                // BlueZ tells a GATT server the link's ATT MTU with each write.
                if let size = try? ATTMTU(self.chunking.effectiveMTU(reported: mtu)) { await simulator.linkMTUChanged(size) }
                link.noteWrite(mtu: mtu, device: options.device)
            }
            await simulator.centralWrote(bytes)
        })
        let notify = LocalGattCharacteristic(uuid: notifyUUID, flags: ["notify"], startNotify: {
            if link.claimStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
        }, stopNotify: {
            if link.end() { await simulator.centralDisconnected() }
        })
        let application = GattApplication(path: Self.applicationPath,
                                          services: [LocalGattService(uuid: profile.service.lowercased(), characteristics: [write, notify])])
        let peripheral = BlueZPeripheral(
            bluez: bluez, adapter: adapter, application: application,
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [profile.service.lowercased()],
                                           localName: name, discoverable: true))
        lock.withLock { self.peripheral = peripheral }
        try await peripheral.start(events: link.bluetoothdEvents { await simulator.centralDisconnected() })
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        disconnectWatcher?.cancel()
        answers.stop()
        await registered?.stop()
    }

    private var registered: BlueZPeripheral? { lock.withLock { peripheral } }
}

public enum NpkNotificationChunking: String, Sendable, CaseIterable {
    /// MTU − 3, as TopStep's SDK cuts frames (an ATT Handle Value Notification's room).
    case handleValueNotification = "mtu-3"
    /// MTU − 5: room for one entry of a Multiple Handle Value Notification, which bluetoothd
    /// sends to a BlueZ central and cuts a longer value to (protocol-spec/npk/topstep-npk.md section 4).
    case multipleNotificationEntry = "mtu-5"

    /// The MTU the watch's chunking (`NpkChunking.chunkSize`, MTU − 3) is given.
    public func effectiveMTU(reported mtu: Int) -> Int {
        switch self {
        case .handleValueNotification: mtu
        case .multipleNotificationEntry: mtu - 2
        }
    }
}
