import Foundation
import TSBlueZ
import TSGATT
import TSModels
import TSProtocol
import TSSimulatedHistory
import TSSimulator
import TSSimulatorPeripheral
import TSTransport

/// The simulated watch as a real BlueZ peripheral: a GATT application with the wire protocol's
/// service and, unless left out, the standard Device Information, Battery and Heart Rate services
/// (GattManager1.RegisterApplication), and an LE advertisement carrying the protocol's UUID
/// (LEAdvertisingManager1.RegisterAdvertisement). Writes from a central feed the simulator; its
/// notifications become Value changes of the notify characteristic. While a central subscribes
/// to Heart Rate Measurement the wearer's heart beats, following the replayed night.
public final class SimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/simulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let bluez: BlueZ
    let simulator: SimulatedWatch
    public let adapter: AdapterInfo
    let name: String
    /// The service UUID put in the advertisement (the GATT service keeps the protocol's).
    let advertisedService: String
    /// Drop the link from the watch's side once the central has acknowledged this many sleep
    /// pages (once per run), so the drop lands mid-transfer with some records stored.
    let dropLinkAfterPages: Int?
    /// The standard services beside protocol v1; nil leaves them out.
    public let standard: SimulatedStandardServices?
    /// The night the heart rate follows (awake throughout without one).
    let night: NightReplay?
    let heartbeat: Duration
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public let answers: TimedNotifications
    private let lock = NSLock()
    private var standardTasks: [Task<Void, Never>] = []
    private var beating: Task<Void, Never>?
    private var peripheral: BlueZPeripheral?
    private let link = PeripheralLink()
    private var dropped = false
    private var disconnectWatcher: Task<Void, Never>?
    /// Called with a line for the operator whenever something about the link happens; set it
    /// before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(bluez: BlueZ, simulator: SimulatedWatch, adapter: AdapterInfo, name: String = "TS-Sim W10",
                advertisedService: String = WatchGATT.service, dropLinkAfterPages: Int? = nil,
                standard: SimulatedStandardServices? = nil, night: NightReplay? = nil, heartbeat: Duration = .seconds(1),
                answerTiming: AnswerTiming = .immediate) {
        self.bluez = bluez
        self.simulator = simulator
        self.adapter = adapter
        self.name = name
        self.advertisedService = advertisedService
        self.dropLinkAfterPages = dropLinkAfterPages
        self.standard = standard
        self.night = night
        self.heartbeat = heartbeat
        answers = TimedNotifications(answerTiming)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start(mtu: Int = 247) async throws {
        let simulator = self.simulator
        let link = self.link
        link.report(to: report)
        let attMTU = (try? ATTMTU(mtu)) ?? .default
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            self?.answers.send { [weak self] in try? self?.registered?.notify(chunk, characteristic: WatchGATT.notifyCharacteristic) }
            await self?.sent(chunk)
        }
        // The watch's side of a link ends when BlueZ reports the central disconnected.
        disconnectWatcher = try await link.watchDisconnections(bluez: bluez, adapter: adapter) { await simulator.centralDisconnected() }
        let write = LocalGattCharacteristic(uuid: WatchGATT.writeCharacteristic, flags: answers.timing.answeringWriteFlags(centralWrites: GATTProfile.protocolV1.writeMode), write: { bytes, options in
            // A bonded central keeps its subscription across links: a write on a new link
            // comes without a StartNotify, so the watch's side of the link starts here.
            if link.claimStart() { await simulator.centralConnected(mtu: attMTU, send: send) }
            if let mtu = options.mtu {
                // BlueZ tells a GATT server the link's ATT MTU with each write; fragment to what a notification carries.
                if let room = PeripheralLink.notificationRoom(atMTU: mtu) { await simulator.linkMTUChanged(room) }
                link.noteWrite(mtu: mtu, device: options.device)
            }
            await simulator.centralWrote(bytes)
        })
        let notify = LocalGattCharacteristic(uuid: WatchGATT.notifyCharacteristic, flags: ["notify"], startNotify: {
            _ = link.claimStart()
            await simulator.centralConnected(mtu: attMTU, send: send)
        }, stopNotify: {
            link.end()
            await simulator.centralDisconnected()
        })
        var services = [LocalGattService(uuid: WatchGATT.service, characteristics: [write, notify])]
        if let standard {
            services += StandardGattServices.services(for: standard) { [weak self] subscribed in self?.heartRateSubscribed(subscribed) }
            await forwardNotifications(of: standard)
        }
        let peripheral = BlueZPeripheral(
            bluez: bluez, adapter: adapter,
            application: GattApplication(path: Self.applicationPath, services: services),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [advertisedService], localName: name, discoverable: true))
        lock.withLock { self.peripheral = peripheral }
        try await peripheral.start(events: link.bluetoothdEvents { await simulator.centralDisconnected() })
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        disconnectWatcher?.cancel()
        lock.withLock {
            standardTasks.forEach { $0.cancel() }
            beating?.cancel()
            beating = nil
        }
        answers.stop()
        await registered?.stop()
    }

    /// The standard services' notifications (Battery Level, Heart Rate Measurement) become Value
    /// changes of their characteristics; bluetoothd sends them to the subscribed centrals.
    private func forwardNotifications(of standard: SimulatedStandardServices) async {
        for characteristic in StandardGattServices.notified {
            let values = await standard.notifications(of: characteristic)
            let task = Task { [weak self] in
                for await value in values { try? self?.registered?.notify(value, characteristic: characteristic.uuid) }
            }
            lock.withLock { standardTasks.append(task) }
        }
    }

    /// A central subscribed to Heart Rate Measurement (the heart starts beating) or left.
    private func heartRateSubscribed(_ subscribed: Bool) {
        guard let standard else { return }
        let (night, heartbeat) = (self.night, self.heartbeat)
        let change: String? = lock.withLock {
            if subscribed, beating == nil {
                beating = Task { await standard.beat(every: heartbeat, following: night) }
                return "a central subscribed to Heart Rate Measurement: one beat every \(heartbeat)"
            }
            guard !subscribed, let task = beating else { return nil }
            task.cancel()
            beating = nil
            return "Heart Rate Measurement unsubscribed"
        }
        if let change { report(change) }
    }

    private var registered: BlueZPeripheral? { lock.withLock { peripheral } }

    private func sent(_ chunk: [UInt8]) async {
        link.sent(chunk.count)
        guard let limit = dropLinkAfterPages, await simulator.statistics.pagesAcknowledged >= limit else { return }
        let central = link.central
        let device: DeviceHandle? = lock.withLock {
            if dropped { return nil }
            dropped = true
            return central
        }
        guard let device else { return }
        report("dropping the link after \(limit) acknowledged sleep pages (fault injection)")
        try? await bluez.disconnect(device)
    }
}
