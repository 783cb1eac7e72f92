import Foundation
import Synchronization
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
public final class SimulatorPeripheral: SimulatedPeripheral {
    public static let applicationPath = "/org/tsgateway/simulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let simulator: SimulatedWatch
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
    public let lifecycle: PeripheralLifecycle
    private struct State {
        var beating: Task<Void, Never>?
        var dropped = false
    }
    private let state = Mutex(State())

    public init(bluez: BlueZ, simulator: SimulatedWatch, adapter: AdapterInfo, name: String = "TS-Sim W10",
                advertisedService: String = WatchGATT.service, dropLinkAfterPages: Int? = nil,
                standard: SimulatedStandardServices? = nil, night: NightReplay? = nil, heartbeat: Duration = .seconds(1),
                answerTiming: AnswerTiming = .immediate) {
        self.simulator = simulator
        self.name = name
        self.advertisedService = advertisedService
        self.dropLinkAfterPages = dropLinkAfterPages
        self.standard = standard
        self.night = night
        self.heartbeat = heartbeat
        lifecycle = PeripheralLifecycle(bluez: bluez, adapter: adapter, answerTiming: answerTiming)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start(mtu: Int = 247) async throws {
        let simulator = self.simulator
        let lifecycle = self.lifecycle
        let attMTU = (try? ATTMTU(mtu)) ?? .default
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            lifecycle.notify(chunk, characteristic: WatchGATT.notifyCharacteristic)
            await self?.dropLinkWhenDue()
        }
        let write = LocalGattCharacteristic(uuid: WatchGATT.writeCharacteristic, flags: answers.timing.answeringWriteFlags(centralWrites: GATTProfile.protocolV1.writeMode), write: { bytes, options in
            // A bonded central keeps its subscription across links: a write on a new link
            // comes without a StartNotify, so the watch's side of the link starts here.
            if lifecycle.claimLinkStart() { await simulator.centralConnected(mtu: attMTU, send: send) }
            // BlueZ tells a GATT server the link's ATT MTU with each write; fragment to what a notification carries.
            if let mtu = lifecycle.noteWrite(options), let room = PeripheralLink.notificationRoom(atMTU: mtu) { await simulator.linkMTUChanged(room) }
            await simulator.centralWrote(bytes)
        })
        let notify = LocalGattCharacteristic(uuid: WatchGATT.notifyCharacteristic, flags: ["notify"], startNotify: {
            _ = lifecycle.claimLinkStart()
            await simulator.centralConnected(mtu: attMTU, send: send)
        }, stopNotify: {
            lifecycle.endLink()
            await simulator.centralDisconnected()
        })
        var services = [LocalGattService(uuid: WatchGATT.service, characteristics: [write, notify])]
        if let standard {
            services += StandardGattServices.services(for: standard) { [weak self] subscribed in self?.heartRateSubscribed(subscribed) }
            await forwardNotifications(of: standard)
            lifecycle.whenStopping { [weak self] in self?.heartRateSubscribed(false) }
        }
        // The adapter keeps its own alias.
        try await lifecycle.register(
            application: GattApplication(path: Self.applicationPath, services: services),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [advertisedService], localName: name, discoverable: true),
            adapterName: nil,
            centralGone: { await simulator.centralDisconnected() })
    }

    /// The standard services' notifications (Battery Level, Heart Rate Measurement) become Value
    /// changes of their characteristics; bluetoothd sends them to the subscribed centrals.
    private func forwardNotifications(of standard: SimulatedStandardServices) async {
        for characteristic in StandardGattServices.notified {
            let values = await standard.notifications(of: characteristic)
            let lifecycle = self.lifecycle
            let task = Task {
                for await value in values { lifecycle.notify(value, characteristic: characteristic.uuid, kind: "\(characteristic) notification", timed: false) }
            }
            lifecycle.whenStopping { task.cancel() }
        }
    }

    /// A central subscribed to Heart Rate Measurement (the heart starts beating) or left.
    private func heartRateSubscribed(_ subscribed: Bool) {
        guard let standard else { return }
        let (night, heartbeat) = (self.night, self.heartbeat)
        let change: String? = state.withLock { state in
            if subscribed, state.beating == nil {
                state.beating = Task { await standard.beat(every: heartbeat, following: night) }
                return "a central subscribed to Heart Rate Measurement: one beat every \(heartbeat)"
            }
            guard !subscribed, let task = state.beating else { return nil }
            task.cancel()
            state.beating = nil
            return "Heart Rate Measurement unsubscribed"
        }
        if let change { report(change) }
    }

    /// Drops the link from the watch's side, once, when the central has acknowledged `dropLinkAfterPages` pages.
    private func dropLinkWhenDue() async {
        guard let limit = dropLinkAfterPages, await simulator.statistics.pagesAcknowledged >= limit else { return }
        let first = state.withLock { state in
            defer { state.dropped = true }
            return !state.dropped
        }
        guard first else { return }
        await lifecycle.disconnectCentral(saying: "dropping the link after \(limit) acknowledged sleep pages (fault injection)")
    }
}
