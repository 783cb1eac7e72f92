import Foundation
import TSBlueZ
import TSGATT
import TSHuami
import TSHuamiSimulator
import TSModels
import TSSimulatorPeripheral

/// The simulated Huami band as a real BlueZ peripheral: a GATT application with the band's
/// characteristics (protocol-spec/huami/huami.md §1) and an LE advertisement under the model's name
/// carrying `FEE0`. Writes feed `SimulatedHuamiBand` with the characteristic written; what it
/// sends becomes Value changes of that characteristic.
///
/// Services: `FEE0` with configuration (`…03`), fetch control (`…04`), activity data (`…05`),
/// battery (`…06`) and Current Time (`2A2B`); `FEE1` with auth (`…09`); Heart Rate (`180D`) with
/// the measurement (`2A37`) and control point (`2A39`); Immediate Alert (`1802`) with Alert Level
/// (`2A06`); Device Information (`180A`). The sources find each characteristic by its UUID
/// (Gadgetbridge, miband2 through bleak), whatever service holds it; which service holds which
/// is the project's layout. Every written characteristic takes write requests and commands
/// (miband2's bleak writes without response), except, with `AnswerTiming.beforeResponse`,
/// the ones that answer (auth, configuration, fetch control): they take write requests only, so
/// that bluetoothd acknowledges a write after the band's answer to it.
public final class HuamiSimulatorPeripheral: SimulatedPeripheral {
    public static let applicationPath = "/org/tsgateway/huamisimulator"
    static let advertisementPath = applicationPath + "/advertisement0"

    let band: SimulatedHuamiBand
    public let lifecycle: PeripheralLifecycle

    public init(bluez: BlueZ, band: SimulatedHuamiBand, adapter: AdapterInfo) {
        self.band = band
        // The band answers from inside the write handler (`SimulatedHuamiBand`'s own timing).
        lifecycle = PeripheralLifecycle(bluez: bluez, adapter: adapter)
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ.
    public func start() async throws {
        let band = self.band
        let lifecycle = self.lifecycle
        let notify: @Sendable (SimulatedHuamiBand.Characteristic, [UInt8]) async -> Void = { characteristic, bytes in
            lifecycle.notify(bytes, characteristic: characteristic.uuid, kind: "\(characteristic.rawValue) notification")
        }
        // The band's side of a link starts at the central's first subscription or write (a bonded
        // central keeps its subscriptions across links and may only write).
        let linkStarts: @Sendable () async -> Void = {
            guard lifecycle.claimLinkStart() else { return }
            lifecycle.report("a central is on the link")
            await band.centralConnected(notify: notify)
        }
        // A transfer cut by fault injection: the band's side disconnects the central.
        await band.onLinkLoss {
            await lifecycle.disconnectCentral(saying: "losing the link mid-transfer after \(await band.statistics.dataPacketsSent) data packets (fault injection)")
        }

        let timing = band.configuration.answerTiming
        func characteristic(_ served: SimulatedHuamiBand.Characteristic, read: Bool = false, write: Bool = false, notify: Bool = false) -> LocalGattCharacteristic {
            var flags: [String] = []
            if read { flags.append("read") }
            if write { flags.append("write") }
            // A write request to a characteristic that also takes commands is acknowledged by
            // bluetoothd as it hands the write over; to one that does not, once the handler returned.
            if write && (timing.answeringCharacteristicsTakeCommands || !served.answers) { flags.append("write-without-response") }
            if notify { flags.append("notify") }
            var gatt = LocalGattCharacteristic(uuid: served.uuid, flags: flags)
            if read { gatt.read = { try await band.read(served) } }
            if write {
                gatt.write = { bytes, options in
                    await linkStarts()
                    lifecycle.noteWrite(options)
                    await band.centralWrote(bytes, to: served)
                }
            }
            if notify { gatt.startNotify = { await linkStarts() } }
            return gatt
        }
        let vendor = LocalGattService(uuid: SimulatedHuamiBand.Characteristic.battery.service, characteristics: [
            characteristic(.configuration, write: true, notify: true),
            characteristic(.fetchControl, write: true, notify: true),
            characteristic(.activityData, notify: true),
            characteristic(.battery, read: true, notify: true),
            characteristic(.currentTime, read: true, write: true, notify: true),
        ])
        let auth = LocalGattService(uuid: SimulatedHuamiBand.Characteristic.auth.service, characteristics: [characteristic(.auth, write: true, notify: true)])
        let heartRate = LocalGattService(uuid: SimulatedHuamiBand.heartRateService, characteristics: [
            characteristic(.heartRateMeasurement, notify: true),
            characteristic(.heartRateControlPoint, read: false, write: true),
        ])
        let alert = LocalGattService(uuid: SimulatedHuamiBand.immediateAlertService, characteristics: [characteristic(.alertLevel, write: true)])
        let deviceInformation = LocalGattService(
            uuid: WatchService.deviceInformation.uuid,
            characteristics: StandardCharacteristic.allCases.compactMap { standard in
                guard let value = band.deviceInformation(standard) else { return nil }
                return LocalGattCharacteristic(uuid: standard.uuid, flags: ["read"], read: { value })
            })
        let name = band.configuration.name
        try await lifecycle.register(
            application: GattApplication(path: Self.applicationPath, services: [vendor, auth, heartRate, alert, deviceInformation]),
            advertisement: LEAdvertisement(path: Self.advertisementPath, kind: .peripheral, serviceUUIDs: [HuamiGATT.service],
                                           localName: name, discoverable: true),
            adapterName: name,
            centralGone: { await band.centralDisconnected() })
    }
}
