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
public final class NpkSimulatorPeripheral: SimulatedPeripheral {
    public static let applicationPath = "/org/tsgateway/npksimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let simulator: SimulatedNpkWatch
    let profile: GATTProfile
    let name: String
    let chunking: NpkNotificationChunking
    public let lifecycle: PeripheralLifecycle

    public init(bluez: BlueZ, simulator: SimulatedNpkWatch, adapter: AdapterInfo, profile: GATTProfile,
                name: String = "TS-Sim NPK", chunking: NpkNotificationChunking = .multipleNotificationEntry,
                answerTiming: AnswerTiming = .immediate) {
        self.simulator = simulator
        self.profile = profile
        self.name = name
        self.chunking = chunking
        lifecycle = PeripheralLifecycle(bluez: bluez, adapter: adapter, answerTiming: answerTiming)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let simulator = self.simulator
        let lifecycle = self.lifecycle
        let chunking = self.chunking
        let notifyUUID = profile.notifyCharacteristic.lowercased()
        let send: @Sendable ([UInt8]) async -> Void = { chunk in lifecycle.notify(chunk, characteristic: notifyUUID) }
        // A link lost by fault injection: the watch's side disconnects the central, after the
        // answers it made before (with late answers, they are still on their way).
        await simulator.onLinkLoss {
            let days = await simulator.statistics.sleepDaysSent
            lifecycle.answers.send {
                Task { await lifecycle.disconnectCentral(saying: "losing the link mid-sync after \(days) sleep days (fault injection)") }
            }
        }
        let startMTU = ATTMTU.default
        let write = LocalGattCharacteristic(uuid: profile.writeCharacteristic.lowercased(), flags: answers.timing.answeringWriteFlags(centralWrites: profile.writeMode), write: { bytes, options in
            // A bonded central keeps its subscription across links: a write on a new link
            // comes without a StartNotify, so the watch's side of the link starts here.
            if lifecycle.claimLinkStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
            // BlueZ tells a GATT server the link's ATT MTU with each write.
            if let mtu = lifecycle.noteWrite(options), let size = try? ATTMTU(chunking.effectiveMTU(reported: mtu)) { await simulator.linkMTUChanged(size) }
            await simulator.centralWrote(bytes)
        })
        let notify = LocalGattCharacteristic(uuid: notifyUUID, flags: ["notify"], startNotify: {
            if lifecycle.claimLinkStart() { await simulator.centralConnected(mtu: startMTU, send: send) }
        }, stopNotify: {
            if lifecycle.endLink() { await simulator.centralDisconnected() }
        })
        let application = GattApplication(path: Self.applicationPath,
                                          services: [LocalGattService(uuid: profile.service.lowercased(), characteristics: [write, notify])])
        // The adapter keeps its own alias, as protocol v1's does.
        try await lifecycle.register(
            application: application,
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [profile.service.lowercased()],
                                           localName: name, discoverable: true),
            adapterName: nil,
            centralGone: { await simulator.centralDisconnected() })
    }
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
