import Foundation
import TSBlueZ
import TSGATT
import TSModels
import TSQRing
import TSQRingSimulator
import TSSimulatorPeripheral
import TSTransport

/// The simulated QRing ring as a real BlueZ peripheral: a GATT application with the ring's two
/// pairs (16-byte packets on the command service, sleep frames on the big-data service) and
/// Device Information (hardware and firmware revision), and an LE advertisement under the ring's
/// name carrying the command service's UUID. Writes feed `SimulatedRing`; what it sends becomes
/// Value changes of the matching notify characteristic.
public final class QRingSimulatorPeripheral: @unchecked Sendable {
    public static let applicationPath = "/org/tsgateway/qringsimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let bluez: BlueZ
    let ring: SimulatedRing
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public let answers: TimedNotifications
    public let adapter: AdapterInfo
    private let lock = NSLock()
    private var peripheral: BlueZPeripheral?
    private let link = PeripheralLink()
    private var disconnectWatcher: Task<Void, Never>?
    /// The adapter carries the ring's name while it runs.
    private let alias = AdapterAlias()
    /// Called with a line for the operator whenever something about the link happens; set it
    /// before `start()`.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(bluez: BlueZ, ring: SimulatedRing, adapter: AdapterInfo, answerTiming: AnswerTiming = .immediate) {
        self.bluez = bluez
        self.ring = ring
        answers = TimedNotifications(answerTiming)
        self.adapter = adapter
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let ring = self.ring
        let link = self.link
        link.report(to: report)
        let send: @Sendable ([UInt8]) async -> Void = { [weak self] packet in
            self?.answers.send { [weak self] in try? self?.registered?.notify(packet, characteristic: QRingGATT.commandNotify) }
        }
        let sendBigData: @Sendable ([UInt8]) async -> Void = { [weak self] chunk in
            self?.answers.send { [weak self] in
                try? self?.registered?.notify(chunk, characteristic: QRingGATT.bigDataNotify)
                link.sent(chunk.count, kind: "big-data notification")
            }
        }
        let writeFlags = answers.timing.answeringWriteFlags(centralWrites: GATTProfile.qring.writeMode)
        // The ring's side of a link starts at the central's first subscription or write on either
        // pair (a bonded central keeps its subscriptions across links and may only write).
        let linkStarts: @Sendable () async -> Void = { [weak self] in
            guard let self, link.claimStart() else { return }
            self.report("a central is on the link")
            await ring.centralConnected(mtu: .default, send: send)
            await ring.centralConnectedSecondChannel(send: sendBigData)
        }
        disconnectWatcher = try await link.watchDisconnections(bluez: bluez, adapter: adapter) { await ring.centralDisconnected() }
        // BlueZ tells a GATT server the link's ATT MTU with each write; big-data replies are cut to it.
        let noteWrite: @Sendable (GattWriteOptions) async -> Void = { options in
            guard let mtu = options.mtu else { return }
            if let room = PeripheralLink.notificationRoom(atMTU: mtu) { await ring.linkMTUChanged(room) }
            link.noteWrite(mtu: mtu)
        }
        let commands = LocalGattService(uuid: QRingGATT.commandService, characteristics: [
            LocalGattCharacteristic(uuid: QRingGATT.commandWrite, flags: writeFlags, write: { bytes, options in
                await linkStarts()
                await noteWrite(options)
                await ring.centralWrote(bytes)
            }),
            LocalGattCharacteristic(uuid: QRingGATT.commandNotify, flags: ["notify"], startNotify: { await linkStarts() }),
        ])
        let bigData = LocalGattService(uuid: QRingGATT.bigDataService, characteristics: [
            LocalGattCharacteristic(uuid: QRingGATT.bigDataWrite, flags: writeFlags, write: { bytes, options in
                await linkStarts()
                await noteWrite(options)
                await ring.centralWroteSecondChannel(bytes)
            }),
            LocalGattCharacteristic(uuid: QRingGATT.bigDataNotify, flags: ["notify"], startNotify: { await linkStarts() }),
        ])
        let deviceInformation = LocalGattService(
            uuid: WatchService.deviceInformation.uuid,
            characteristics: StandardCharacteristic.allCases.filter { ring.standardCharacteristics.contains($0) }.map { characteristic in
                LocalGattCharacteristic(uuid: characteristic.uuid, flags: ["read"], read: { try await ring.read(characteristic) })
            })
        let peripheral = BlueZPeripheral(
            bluez: bluez, adapter: adapter,
            application: GattApplication(path: Self.applicationPath, services: [commands, bigData, deviceInformation]),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [QRingGATT.commandService],
                                           localName: ring.configuration.name, discoverable: true))
        await alias.take(ring.configuration.name, bluez: bluez, adapter: adapter, report: report)
        lock.withLock { self.peripheral = peripheral }
        try await peripheral.start(events: link.bluetoothdEvents { await ring.centralDisconnected() })
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
