import Foundation
import TSFamilyKit
import TSGATT
import TSHuami
import TSHuamiSimulator
import TSHuamiWatch
import TSModels
import TSTransport

extension WatchFamily {
    /// Huami bands (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2): recognised by their vendor service,
    /// paired with the band's auth key. The simulated band is a Mi Band 5 (8-byte samples) with
    /// the generator's nights for the seed, and takes `HuamiAuthKey.simulatorDefault`.
    public static let huami = WatchFamily(dialect: .huami, simulated: SimulatedFamily { options in try SimulatedHuamiDevice.open(options) },
                                         peripheral: .huami)
}

/// The simulated band as a simulated device.
public struct SimulatedHuamiDevice: SimulatedDevice {
    public let band: SimulatedHuamiBand
    public var sleepRecords: [SleepItem] { band.history.sleepItems }

    static func open(_ options: SimulatedWatchOptions) throws -> SimulatedLink {
        let configuration = SimulatedHuamiBand.Configuration()
        let history = HuamiBandHistory(seed: options.seed, timeZone: options.timeZone, now: options.now, days: options.historyDays,
                                       format: configuration.sampleFormat)
        let start = options.now, opened = Date()
        let band = SimulatedHuamiBand(configuration: configuration, history: history, alarms: options.alarms, monitors: options.monitors,
                                      now: { start.addingTimeInterval(Date().timeIntervalSince(opened)) })
        let link = HuamiBandLink(band: band)
        let transport = LoopbackTransport(peripheral: link, mtu: try ATTMTU(247), faults: options.faults, standard: band, name: configuration.name,
                                          characteristics: link)
        let key = PairingSecret(key: PairingCredential.huamiAuthKey.key, text: configuration.authKey.bytes.map { String(format: "%02x", $0) }.joined())
        return SimulatedLink(transport: transport, device: SimulatedHuamiDevice(band: band), pairingSecret: key)
    }

    public func alarmTable() async -> [Alarm]? { await band.alarms }
    public func monitorTable() async -> [MonitorConfig]? { await band.monitorTable }
    public func editFirstAlarmOnWrist() async {}
}

/// The simulated band on a loopback link: its configuration characteristic is the link's
/// write/notify pair (the Huami profile's), its other characteristics are addressed by service and UUID.
public actor HuamiBandLink: PeripheralEndpoint, CharacteristicsEndpoint {
    public let band: SimulatedHuamiBand
    private var pair: (@Sendable ([UInt8]) async -> Void)?
    private var others: (@Sendable (GATTCharacteristicID, [UInt8]) async -> Void)?

    public init(band: SimulatedHuamiBand) { self.band = band }

    public nonisolated var characteristics: Set<GATTCharacteristicID> {
        Set(SimulatedHuamiBand.Characteristic.allCases.filter { $0 != .configuration }.map(Self.id))
    }

    static func id(_ characteristic: SimulatedHuamiBand.Characteristic) -> GATTCharacteristicID {
        GATTCharacteristicID(service: characteristic.service, uuid: characteristic.uuid)
    }

    static func characteristic(_ id: GATTCharacteristicID) -> SimulatedHuamiBand.Characteristic? {
        SimulatedHuamiBand.Characteristic.allCases.first { Self.id($0) == id }
    }

    // The loopback connects the pair first, then the other characteristics: the band hears of
    // the central once both can take its notifications.
    public func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async { pair = send }

    public func centralConnected(notify: @escaping @Sendable (GATTCharacteristicID, [UInt8]) async -> Void) async {
        others = notify
        let pair = self.pair
        await band.centralConnected { characteristic, bytes in
            if characteristic == .configuration { await pair?(bytes) } else { await notify(Self.id(characteristic), bytes) }
        }
    }

    public func centralWrote(_ chunk: [UInt8]) async { await band.centralWrote(chunk, to: .configuration) }

    public func read(_ id: GATTCharacteristicID) async throws -> [UInt8] {
        guard let characteristic = Self.characteristic(id) else { throw TransportError.noCharacteristic(id) }
        return try await band.read(characteristic)
    }

    public func centralWrote(_ value: [UInt8], to id: GATTCharacteristicID) async throws {
        guard let characteristic = Self.characteristic(id) else { throw TransportError.noCharacteristic(id) }
        await band.centralWrote(value, to: characteristic)
    }

    public func centralDisconnected() async {
        pair = nil
        others = nil
        await band.centralDisconnected()
    }
}
