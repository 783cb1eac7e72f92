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
public final class QRingSimulatorPeripheral: SimulatedPeripheral {
    public static let applicationPath = "/org/tsgateway/qringsimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let ring: SimulatedRing
    public let lifecycle: PeripheralLifecycle

    public init(bluez: BlueZ, ring: SimulatedRing, adapter: AdapterInfo, answerTiming: AnswerTiming = .immediate) {
        self.ring = ring
        lifecycle = PeripheralLifecycle(bluez: bluez, adapter: adapter, answerTiming: answerTiming)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let ring = self.ring
        let lifecycle = self.lifecycle
        let send: @Sendable ([UInt8]) async -> Void = { packet in lifecycle.notify(packet, characteristic: QRingGATT.commandNotify) }
        let sendBigData: @Sendable ([UInt8]) async -> Void = { chunk in
            lifecycle.notify(chunk, characteristic: QRingGATT.bigDataNotify, kind: "big-data notification")
        }
        let writeFlags = answers.timing.answeringWriteFlags(centralWrites: GATTProfile.qring.writeMode)
        // The ring's side of a link starts at the central's first subscription or write on either pair.
        let linkStarts: @Sendable () async -> Void = {
            guard lifecycle.claimLinkStart() else { return }
            lifecycle.report("a central is on the link")
            await ring.centralConnected(mtu: .default, send: send)
            await ring.centralConnectedSecondChannel(send: sendBigData)
        }
        // BlueZ tells a GATT server the link's ATT MTU with each write; big-data replies are cut to it.
        let noteWrite: @Sendable (GattWriteOptions) async -> Void = { options in
            if let mtu = lifecycle.noteWrite(options), let room = PeripheralLink.notificationRoom(atMTU: mtu) { await ring.linkMTUChanged(room) }
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
        try await lifecycle.register(
            application: GattApplication(path: Self.applicationPath, services: [commands, bigData, deviceInformation]),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [QRingGATT.commandService],
                                           localName: ring.configuration.name, discoverable: true),
            adapterName: ring.configuration.name,
            centralGone: { await ring.centralDisconnected() })
    }
}
