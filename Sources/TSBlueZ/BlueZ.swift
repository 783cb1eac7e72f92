import Foundation
import TSDBus

/// Why a BlueZ operation failed, with what to do about it.
public enum BlueZError: Error, Sendable, CustomStringConvertible {
    case noSystemBus(String)
    case noBluetoothd
    case noAdapter(String?)
    case adapterPoweredOff(String)
    case permissionDenied(String)
    case inProgress(String)
    case deviceNotFound(String)
    case authenticationFailed(String)
    case connectTimedOut(String)
    case disconnected(String)
    case failed(name: String, message: String)

    public var description: String {
        switch self {
        case let .noSystemBus(detail): "cannot reach the D-Bus system bus (\(detail)); is dbus running?"
        case .noBluetoothd: "bluetoothd is not running on the system bus; start it with `sudo systemctl start bluetooth`"
        case let .noAdapter(name): name.map { "no Bluetooth adapter named \($0); see `tsgateway adapter list`" } ?? "no Bluetooth adapter found; plug one in or check `rfkill list`"
        case let .adapterPoweredOff(name): "adapter \(name) is powered off; run `tsgateway adapter power on --adapter \(name)`"
        case let .permissionDenied(detail): "D-Bus policy denied the request (\(detail)); run as a member of the `bluetooth` group or as root"
        case let .inProgress(what): "\(what) is already in progress; try again in a moment"
        case let .deviceNotFound(address): "no device \(address) is known to BlueZ; run `tsgateway scan` with the watch awake and near"
        case let .authenticationFailed(detail): "pairing failed (\(detail)); put the watch in pairing mode and try again"
        case let .connectTimedOut(address): "\(address) did not finish connecting in time; is it in range and awake?"
        case let .disconnected(address): "\(address) disconnected while connecting"
        case let .failed(name, message): "BlueZ: \(name)" + (message.isEmpty ? "" : ": \(message)")
        }
    }

    /// As `from(_:adapter:)` for a call on a device object: an object that is not there (any
    /// more) is the device BlueZ no longer knows, not a missing adapter.
    public static func from(_ error: BusError, device: DeviceHandle) -> BlueZError {
        switch error.name {
        case BusError.unknownObject, BusError.unknownMethod: .deviceNotFound(device.address)
        default: from(error)
        }
    }

    /// The specific error for a D-Bus failure talking to BlueZ.
    public static func from(_ error: BusError, adapter: String? = nil) -> BlueZError {
        switch error.name {
        case BusError.serviceUnknown, BusError.nameHasNoOwner: .noBluetoothd
        case BusError.accessDenied: .permissionDenied(error.message)
        case BlueZErrorName.notReady: .adapterPoweredOff(adapter ?? "hci0")
        case BlueZErrorName.inProgress: .inProgress("that operation")
        case BlueZErrorName.doesNotExist: .deviceNotFound(error.message)
        case BlueZErrorName.authenticationFailed, BlueZErrorName.authenticationCanceled, BlueZErrorName.authenticationRejected,
             BlueZErrorName.authenticationTimeout, BlueZErrorName.connectionAttemptFailed: .authenticationFailed(error.message)
        case BusError.unknownObject, BusError.unknownMethod: .noAdapter(adapter)
        default: .failed(name: error.name, message: error.message)
        }
    }
}

public struct AdapterInfo: Sendable, Hashable, Codable {
    public var name: String
    public var path: String
    public var address: String
    public var alias: String
    public var powered: Bool
    public var discovering: Bool
}

public struct DiscoveredDevice: Sendable, Hashable, Codable {
    public var path: String
    public var address: String
    public var name: String?
    public var rssi: Int?
    public var uuids: [String]
    public var paired: Bool
}

/// The typed BlueZ client (org.bluez on the system bus).
public struct BlueZ: Sendable {
    public let bus: BusConnection

    public init(bus: BusConnection) { self.bus = bus }

    /// How long a call that bluetoothd answers from its own state (object lists, properties,
    /// agent and application registration, trust) may take. Not short: on a loaded Pi, or a
    /// loaded CI machine whose bluetoothd stand-in shares the CPU with the tests, 5 s expired
    /// (`pair` failed with NoReply after RegisterAgent had been carried out).
    public static let replyTimeout: Duration = .seconds(25)

    /// Connects to the system bus, or to `TSGATEWAY_DBUS_ADDRESS` when set (tests, development).
    public static func connect(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BlueZ {
        do {
            if let address = environment["TSGATEWAY_DBUS_ADDRESS"], !address.isEmpty {
                return BlueZ(bus: try BusConnection(.address(address)))
            }
            return BlueZ(bus: try BusConnection(.system))
        } catch {
            throw BlueZError.noSystemBus(error.message)
        }
    }

    private func managedObjects() async throws -> [String: [String: DBusProperties]] {
        do {
            return try await bus.managedObjects(destination: Self.service, timeout: BlueZ.replyTimeout)
        } catch let error as BusError {
            throw BlueZError.from(error)
        }
    }

    public func adapters() async throws -> [AdapterInfo] {
        try await managedObjects().compactMap { path, interfaces in
            guard let adapter = interfaces[BlueZInterface.adapter] else { return nil }
            return AdapterInfo(name: String(path.split(separator: "/").last ?? ""), path: path,
                               address: adapter["Address"]?.stringValue ?? "", alias: adapter["Alias"]?.stringValue ?? "",
                               powered: adapter["Powered"]?.boolValue ?? false, discovering: adapter["Discovering"]?.boolValue ?? false)
        }.sorted { $0.name < $1.name }
    }

    /// The named adapter, or the first one.
    public func adapter(_ name: String?) async throws -> AdapterInfo {
        let all = try await adapters()
        guard let found = name.map({ wanted in all.first { $0.name == wanted } }) ?? all.first else {
            throw BlueZError.noAdapter(name)
        }
        return found
    }

    public func setPowered(_ on: Bool, adapter: AdapterInfo) async throws {
        do {
            try await bus.setProperty(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, name: "Powered", value: .boolean(on), timeout: .seconds(10))
        } catch let error as BusError {
            throw BlueZError.from(error, adapter: adapter.name)
        }
    }

    /// Sets the adapter's Alias: the name it advertises by default and its GAP Device Name,
    /// which a central reads once connected.
    public func setAlias(_ alias: String, adapter: AdapterInfo) async throws {
        do {
            try await bus.setProperty(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, name: "Alias", value: .string(alias), timeout: .seconds(10))
        } catch let error as BusError {
            throw BlueZError.from(error, adapter: adapter.name)
        }
    }

    /// Devices seen during `duration` of LE discovery (filtered on `serviceUUIDs` unless empty),
    /// delivered as they appear and again when their RSSI or name changes. Subscribes to
    /// InterfacesAdded and PropertiesChanged before reading the objects BlueZ already has.
    ///
    /// Discovery is restarted every `restartEvery`: the kernel drops an advertising report that
    /// arrives before it marks discovery active, and the controller's duplicate filter never
    /// reports that advertiser again in the same scan (seen with fast controllers).
    public func scan(adapter: AdapterInfo, serviceUUIDs: [String], duration: Duration, restartEvery: Duration = .seconds(3)) async throws -> AsyncStream<DiscoveredDevice> {
        guard adapter.powered else { throw BlueZError.adapterPoweredOff(adapter.name) }
        let added = try await bus.signals(SignalMatch(sender: Self.service, interface: StandardBusNames.objectManager, member: "InterfacesAdded"))
        let changed = try await bus.signals(SignalMatch(sender: Self.service, pathNamespace: adapter.path, interface: StandardBusNames.properties, member: "PropertiesChanged"))
        let existing = try await managedObjects()
        do {
            var filter: DBusProperties = ["Transport": .string("le")]
            if !serviceUUIDs.isEmpty { filter["UUIDs"] = .strings(serviceUUIDs) }
            _ = try await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "SetDiscoveryFilter", [.properties(filter)], timeout: BlueZ.replyTimeout)
            _ = try await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "StartDiscovery", timeout: BlueZ.replyTimeout)
        } catch let error as BusError where error.name != BlueZErrorName.inProgress {
            throw BlueZError.from(error, adapter: adapter.name)
        }
        let tracker = DeviceTracker(adapterPath: adapter.path, wanted: Set(serviceUUIDs.map { $0.lowercased() }))
        let bus = self.bus
        return AsyncStream { continuation in
            for (path, interfaces) in existing.sorted(by: { $0.key < $1.key }) {
                if let device = tracker.update(path: path, properties: interfaces[BlueZInterface.device]) { continuation.yield(device) }
            }
            let work = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await signal in added where signal.arguments.count == 2 {
                            guard let path = signal.arguments[0].objectPathValue,
                                  let interfaces = signal.arguments[1].unwrapped.managedInterfaces else { continue }
                            if let device = tracker.update(path: path, properties: interfaces[BlueZInterface.device]) { continuation.yield(device) }
                        }
                    }
                    group.addTask {
                        for await signal in changed where signal.arguments.first?.stringValue == BlueZInterface.device {
                            if let device = tracker.update(path: signal.path, properties: signal.arguments[1].propertiesValue) { continuation.yield(device) }
                        }
                    }
                    group.addTask {
                        while (try? await Task.sleep(for: restartEvery)) != nil {
                            _ = try? await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "StopDiscovery", timeout: BlueZ.replyTimeout)
                            _ = try? await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "StartDiscovery", timeout: BlueZ.replyTimeout)
                        }
                    }
                    group.addTask { try? await Task.sleep(for: duration) }
                    await group.next()
                    group.cancelAll()
                }
                _ = try? await bus.call(destination: Self.service, path: adapter.path, interface: BlueZInterface.adapter, member: "StopDiscovery", timeout: BlueZ.replyTimeout)
                continuation.finish()
            }
            continuation.onTermination = { _ in work.cancel() }
        }
    }
}

/// Merges what BlueZ reports about each device of one adapter.
final class DeviceTracker: @unchecked Sendable {
    private let lock = NSLock()
    private var devices: [String: DiscoveredDevice] = [:]
    let adapterPath: String
    let wanted: Set<String>

    init(adapterPath: String, wanted: Set<String>) {
        self.adapterPath = adapterPath
        self.wanted = wanted
    }

    func update(path: String, properties: DBusProperties?) -> DiscoveredDevice? {
        guard let properties, path.hasPrefix(adapterPath + "/") else { return nil }
        lock.lock(); defer { lock.unlock() }
        var device = devices[path] ?? DiscoveredDevice(path: path, address: "", name: nil, rssi: nil, uuids: [], paired: false)
        if let address = properties["Address"]?.stringValue { device.address = address }
        if let name = properties["Name"]?.stringValue ?? properties["Alias"]?.stringValue { device.name = name }
        if let rssi = properties["RSSI"]?.int16Value { device.rssi = rssi == 127 ? nil : Int(rssi) }  // 127: "not available" (HCI)
        if let uuids = properties["UUIDs"]?.stringArrayValue { device.uuids = uuids }
        if let paired = properties["Paired"]?.boolValue { device.paired = paired }
        devices[path] = device
        guard !device.address.isEmpty else { return nil }
        if !wanted.isEmpty && wanted.isDisjoint(with: device.uuids.map { $0.lowercased() }) { return nil }
        return device
    }
}

extension DBusValue {
    /// `a{sa{sv}}` (InterfacesAdded) as interface → properties.
    var managedInterfaces: [String: DBusProperties]? {
        guard case let .dictionary(_, _, entries) = self else { return nil }
        var result: [String: DBusProperties] = [:]
        for entry in entries {
            guard let name = entry.key.stringValue, let properties = entry.value.propertiesValue else { return nil }
            result[name] = properties
        }
        return result
    }
}
