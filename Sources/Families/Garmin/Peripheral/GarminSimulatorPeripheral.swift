import Foundation
import TSBlueZ
import TSGATT
import TSGarmin
import TSGarminSimulator
import TSModels
import TSSimulatorPeripheral
import TSTransport

/// The simulated Garmin watch as a real BlueZ peripheral: a GATT application with the Multi-Link
/// service's first pair (the host writes on `2820`, with or without response; the watch notifies
/// on `2810`) and an LE advertisement under the watch's name carrying the service's UUID. Writes
/// feed `SimulatedGarminWatch`; what it sends becomes Value changes of the receive characteristic.
public final class GarminSimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/garminsimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let bluez: BlueZ
    let watch: SimulatedGarminWatch
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public let answers: TimedNotifications
    public let adapter: AdapterInfo
    private let lock = NSLock()
    private var peripheral: BlueZPeripheral?
    private let link = PeripheralLink()
    private var disconnectWatcher: Task<Void, Never>?
    /// The adapter carries the watch's name while it runs.
    private let alias = AdapterAlias()
    /// Called with a line for the operator whenever something about the link happens; set it before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(bluez: BlueZ, watch: SimulatedGarminWatch, adapter: AdapterInfo, answerTiming: AnswerTiming = .immediate) {
        self.bluez = bluez
        self.watch = watch
        answers = TimedNotifications(answerTiming)
        self.adapter = adapter
    }

    /// The name it advertises: the watch's Bluetooth name.
    public var name: String { watch.configuration.deviceInformation.bluetoothName }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let watch = self.watch
        let link = self.link
        link.report(to: report)
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] packet in
            self?.answers.send { [weak self] in
                try? self?.registered?.notify(packet, characteristic: GarminGATT.receive)
                link.sent(packet.count, kind: "notification")
            }
        }
        // Both write kinds (§1): garmin-ble and garmin-bridge write without response, Gadgetbridge with it.
        let writeFlags = ["write", "write-without-response"]
        // The watch's side of a link starts at the central's first subscription or write.
        let linkStarts: @Sendable () async -> Void = { [weak self] in
            guard let self, link.claimStart() else { return }
            self.report("a central is on the link")
            await watch.centralConnected(mtu: .default, send: send)
        }
        // A transfer cut by fault injection: the watch's side disconnects the central.
        await watch.onLinkLoss { [weak self] in
            guard let self, let device = link.central else { return }
            self.report("losing the link mid-transfer after \(await watch.statistics.chunksSent) chunks (fault injection)")
            try? await self.bluez.disconnect(device)
        }
        disconnectWatcher = try await link.watchDisconnections(bluez: bluez, adapter: adapter) { await watch.centralDisconnected() }
        // BlueZ tells a GATT server the link's ATT MTU with each write; the watch's slices follow
        // what a notification carries (a whole-MTU slice lost a frame under EATT).
        let noteWrite: @Sendable (GattWriteOptions) async -> Void = { options in
            guard let mtu = options.mtu else { return }
            if let room = PeripheralLink.notificationRoom(atMTU: mtu) { await watch.linkMTUChanged(room) }
            link.noteWrite(mtu: mtu, device: options.device)
        }
        let multiLink = LocalGattService(uuid: GarminGATT.service, characteristics: [
            LocalGattCharacteristic(uuid: GarminGATT.send, flags: writeFlags, write: { bytes, options in
                await linkStarts()
                await noteWrite(options)
                await watch.centralWrote(bytes)
            }),
            LocalGattCharacteristic(uuid: GarminGATT.receive, flags: ["notify"], startNotify: { await linkStarts() }),
        ])
        let peripheral = BlueZPeripheral(
            bluez: bluez, adapter: adapter,
            application: GattApplication(path: Self.applicationPath, services: [multiLink]),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [GarminGATT.service],
                                           localName: name, discoverable: true))
        await alias.take(name, bluez: bluez, adapter: adapter, report: report)
        lock.withLock { self.peripheral = peripheral }
        try await peripheral.start(events: link.bluetoothdEvents { await watch.centralDisconnected() })
    }

    /// Starts the advertisement anew (see `BlueZPeripheral.advertiseAgain`).
    public func advertiseAgain() async throws {
        try await registered?.advertiseAgain()
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        disconnectWatcher?.cancel()
        answers.stop()
        await registered?.stop()
        await alias.restore(bluez: bluez, adapter: adapter)
    }

    private var registered: BlueZPeripheral? { lock.withLock { peripheral } }
}
