import Foundation
import TSDBus
import TSModels

/// What a pairing agent can do (org.bluez.Agent1's capabilities), and with it how BlueZ pairs:
/// a central without display or keyboard pairs by Just Works; one that can type pairs with a
/// watch that displays a passkey by entering it; a peripheral that displays one shows it.
public struct PairingAgent: Sendable {
    public enum Capability: String, Sendable {
        case noInputNoOutput = "NoInputNoOutput", keyboardDisplay = "KeyboardDisplay", displayOnly = "DisplayOnly"
    }

    public var capability: Capability
    /// Asked for the passkey the other device displays (RequestPasskey), with the device's object
    /// path; nil refuses. A thrown error refuses the pairing with its text.
    public var passkey: (@Sendable (_ device: String) async throws -> UInt32)?
    /// Told the passkey to show the other device's user (DisplayPasskey).
    public var display: (@Sendable (_ device: String, _ passkey: UInt32) -> Void)?
    /// Whether BlueZ asks this agent for pairings nobody of this process started (the peripheral
    /// side's, an incoming request): the default agent. A central's `pair` needs only its own
    /// Pair calls answered, which BlueZ asks the caller's agent.
    public var isDefault: Bool

    /// Just Works for every request, the default agent: the gateway without display or keyboard.
    public static let justWorks = PairingAgent(capability: .noInputNoOutput, isDefault: true)

    public init(capability: Capability, passkey: (@Sendable (_ device: String) async throws -> UInt32)? = nil,
                display: (@Sendable (_ device: String, _ passkey: UInt32) -> Void)? = nil, isDefault: Bool) {
        self.capability = capability
        self.passkey = passkey
        self.display = display
        self.isDefault = isDefault
    }
}

/// A pairing agent: it accepts Just Works confirmations and service authorizations, answers a
/// passkey request when it has a way to (`PairingAgent.passkey`), shows a passkey when it can, and
/// refuses PIN codes (LE pairing has none).
extension BlueZ {
    public static let agentPath = "/org/tsgateway/agent"

    public func registerAgent(_ agent: PairingAgent = .justWorks) async throws {
        let noPIN = BusError(name: BlueZErrorName.rejected, message: "this gateway pairs without PIN codes")
        let noPasskey = BusError(name: BlueZErrorName.rejected, message: "this gateway has no keyboard to enter a passkey with")
        try bus.export(path: Self.agentPath, interfaces: [DBusInterface(BlueZInterface.agent, methods: [
            DBusMethod("Release") { _, _ in [] },
            DBusMethod("RequestPinCode", in: "o", out: "s") { _, _ in throw noPIN },
            DBusMethod("DisplayPinCode", in: "os") { _, _ in [] },
            DBusMethod("RequestPasskey", in: "o", out: "u") { arguments, _ in
                guard let ask = agent.passkey else { throw noPasskey }
                do {
                    return [.uint32(try await ask(arguments.first?.objectPathValue ?? ""))]
                } catch {
                    throw BusError(name: BlueZErrorName.rejected, message: String(describing: error))
                }
            },
            DBusMethod("DisplayPasskey", in: "ouq") { arguments, _ in
                if let passkey = arguments.dropFirst().first?.uint32Value { agent.display?(arguments.first?.objectPathValue ?? "", passkey) }
                return []
            },
            DBusMethod("RequestConfirmation", in: "ou") { _, _ in [] },
            DBusMethod("RequestAuthorization", in: "o") { _, _ in [] },
            DBusMethod("AuthorizeService", in: "os") { _, _ in [] },
            DBusMethod("Cancel") { _, _ in [] },
        ])])
        do {
            _ = try await bus.call(destination: Self.service, path: Self.managerPath, interface: BlueZInterface.agentManager, member: "RegisterAgent",
                                   [.objectPath(Self.agentPath), .string(agent.capability.rawValue)], timeout: BlueZ.replyTimeout)
            if agent.isDefault {
                _ = try await bus.call(destination: Self.service, path: Self.managerPath, interface: BlueZInterface.agentManager, member: "RequestDefaultAgent",
                                       [.objectPath(Self.agentPath)], timeout: BlueZ.replyTimeout)
            }
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
