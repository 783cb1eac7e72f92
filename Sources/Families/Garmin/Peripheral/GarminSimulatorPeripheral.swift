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
public final class GarminSimulatorPeripheral: SimulatedPeripheral {
    public static let applicationPath = "/org/tsgateway/garminsimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let watch: SimulatedGarminWatch
    public let lifecycle: PeripheralLifecycle

    public init(bluez: BlueZ, watch: SimulatedGarminWatch, adapter: AdapterInfo, answerTiming: AnswerTiming = .immediate) {
        self.watch = watch
        lifecycle = PeripheralLifecycle(bluez: bluez, adapter: adapter, answerTiming: answerTiming)
    }

    /// The name it advertises: the watch's Bluetooth name.
    public var name: String { watch.configuration.deviceInformation.bluetoothName }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let watch = self.watch
        let lifecycle = self.lifecycle
        let send: @Sendable ([UInt8]) async -> Void = { packet in lifecycle.notify(packet, characteristic: GarminGATT.receive) }
        // Both write kinds (§1): garmin-ble and garmin-bridge write without response, Gadgetbridge with it.
        let writeFlags = ["write", "write-without-response"]
        // The watch's side of a link starts at the central's first subscription or write.
        let linkStarts: @Sendable () async -> Void = {
            guard lifecycle.claimLinkStart() else { return }
            lifecycle.report("a central is on the link")
            await watch.centralConnected(mtu: .default, send: send)
        }
        // A settings file taken (§10): what the watch's alarms now are, for the journey to compare.
        await watch.onAlarmsSet { alarms in
            let described = alarms.map { alarm in
                "\(AlarmText.formatTime(hour: alarm.hour, minute: alarm.minute)) \(AlarmText.describeRepeat(alarm.repeatDays))"
                    + (alarm.label.isEmpty ? "" : " \"\(alarm.label)\"") + (alarm.isEnabled ? "" : " off")
            }
            lifecycle.report("alarms set from a settings file: \(alarms.count) (\(described.joined(separator: ", ")))")
        }
        // A transfer cut by fault injection: the watch's side disconnects the central.
        await watch.onLinkLoss {
            await lifecycle.disconnectCentral(saying: "losing the link mid-transfer after \(await watch.statistics.chunksSent) chunks (fault injection)")
        }
        // BlueZ tells a GATT server the link's ATT MTU with each write; the watch's slices follow
        // what a notification carries (a whole-MTU slice lost a frame under EATT).
        let noteWrite: @Sendable (GattWriteOptions) async -> Void = { options in
            if let mtu = lifecycle.noteWrite(options), let room = PeripheralLink.notificationRoom(atMTU: mtu) { await watch.linkMTUChanged(room) }
        }
        let multiLink = LocalGattService(uuid: GarminGATT.service, characteristics: [
            LocalGattCharacteristic(uuid: GarminGATT.send, flags: writeFlags, write: { bytes, options in
                await linkStarts()
                await noteWrite(options)
                await watch.centralWrote(bytes)
            }),
            LocalGattCharacteristic(uuid: GarminGATT.receive, flags: ["notify"], startNotify: { await linkStarts() }),
        ])
        try await lifecycle.register(
            application: GattApplication(path: Self.applicationPath, services: [multiLink]),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [GarminGATT.service],
                                           localName: name, discoverable: true),
            adapterName: name,
            // A Garmin watch pairs by the passkey it shows (§6): the host types it in.
            agent: PairingAgent(capability: .displayOnly, display: { _, passkey in
                lifecycle.report("pairing: the watch shows passkey \(String(format: "%06u", passkey))")
            }, isDefault: true),
            centralGone: { await watch.centralDisconnected() })
    }
}
