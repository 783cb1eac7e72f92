import Foundation
import TSDBus
import TSModels

/// A pairing agent for a gateway without display or keyboard (capability NoInputNoOutput):
/// it accepts Just Works confirmations and service authorizations, and refuses PIN and
/// passkey requests it cannot answer.
extension BlueZ {
    public static let agentPath = "/org/tsgateway/agent"

    public func registerAgent() async throws {
        let rejected = BusError(name: BlueZErrorName.rejected, message: "this gateway has no display or keyboard")
        try bus.export(path: Self.agentPath, interfaces: [DBusInterface(BlueZInterface.agent, methods: [
            DBusMethod("Release") { _, _ in [] },
            DBusMethod("RequestPinCode", in: "o", out: "s") { _, _ in throw rejected },
            DBusMethod("DisplayPinCode", in: "os") { _, _ in [] },
            DBusMethod("RequestPasskey", in: "o", out: "u") { _, _ in throw rejected },
            DBusMethod("DisplayPasskey", in: "ouq") { _, _ in [] },
            DBusMethod("RequestConfirmation", in: "ou") { _, _ in [] },
            DBusMethod("RequestAuthorization", in: "o") { _, _ in [] },
            DBusMethod("AuthorizeService", in: "os") { _, _ in [] },
            DBusMethod("Cancel") { _, _ in [] },
        ])])
        do {
            _ = try await bus.call(destination: Self.service, path: Self.managerPath, interface: BlueZInterface.agentManager, member: "RegisterAgent",
                                   [.objectPath(Self.agentPath), .string("NoInputNoOutput")], timeout: BlueZ.replyTimeout)
            _ = try await bus.call(destination: Self.service, path: Self.managerPath, interface: BlueZInterface.agentManager, member: "RequestDefaultAgent",
                                   [.objectPath(Self.agentPath)], timeout: BlueZ.replyTimeout)
        } catch let error as BusError where error.name != BlueZErrorName.alreadyExists {
            throw BlueZError.from(error)
        }
    }

    /// Forgets a device (and its bond).
    public func remove(_ device: DeviceHandle, adapter: AdapterInfo) async throws {
        do {
            _ = try await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "RemoveDevice",
                                   [.objectPath(device.path)], timeout: .seconds(10))
        } catch let error as BusError { throw BlueZError.from(error) }
    }

    /// The device, discovering it first when BlueZ has forgotten it (device objects vanish when
    /// discovery stops and nobody is connected).
    public func discover(address: String, adapter: AdapterInfo, within duration: Duration = .seconds(10)) async throws -> DeviceHandle {
        if let known = try? await device(address: address, adapter: adapter) { return known }
        let devices = try await scan(adapter: adapter, serviceUUIDs: [], duration: duration)
        let wanted = WatchID(address)
        for await found in devices where WatchID(found.address) == wanted {
            return DeviceHandle(path: found.path, address: WatchID(found.address)?.rawValue ?? found.address)
        }
        throw BlueZError.deviceNotFound(address)
    }
}
