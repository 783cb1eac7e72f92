import Foundation
import TSDBus

/// A device object of BlueZ (org.bluez.Device1).
public struct DeviceHandle: Sendable, Hashable {
    public var path: String
    public var address: String

    public init(path: String, address: String) {
        self.path = path
        self.address = address
    }

    /// The device at `path`, its address read from the path (…/dev_AA_BB_CC_DD_EE_FF).
    public init(path: String) {
        let name = path.split(separator: "/").last ?? ""
        self.init(path: path, address: name.hasPrefix("dev_") ? name.dropFirst(4).replacingOccurrences(of: "_", with: ":") : "")
    }
}

extension BlueZ {
    /// The device with `address` under `adapter`, as BlueZ knows it now.
    public func device(address: String, adapter: AdapterInfo) async throws -> DeviceHandle {
        let objects: [String: [String: DBusProperties]]
        do { objects = try await bus.managedObjects(destination: Self.service, timeout: .seconds(5)) } catch let error as BusError { throw BlueZError.from(error) }
        let wanted = address.uppercased()
        guard let path = objects.first(where: { path, interfaces in
            path.hasPrefix(adapter.path + "/") && interfaces[BlueZInterface.device]?["Address"]?.stringValue?.uppercased() == wanted
        })?.key else { throw BlueZError.deviceNotFound(address) }
        return DeviceHandle(path: path, address: wanted)
    }

    public func deviceProperties(_ device: DeviceHandle) async throws -> DBusProperties {
        do { return try await bus.getAllProperties(destination: Self.service, path: device.path, interface: BlueZInterface.device, timeout: .seconds(5)) }
        catch let error as BusError { throw BlueZError.from(error, device: device) }
    }

    /// Connects and waits until BlueZ has resolved the GATT services. Skips Connect when the
    /// link is already up (BlueZ keeps links after a client dies); retries InProgress and
    /// le-connection-abort-by-local with backoff; the wait races a disconnect and the device
    /// object vanishing, and ends after `timeout`. Signals are subscribed before reading state.
    /// `linkUp` is called once the link is up, before the wait for the services.
    public func connect(_ device: DeviceHandle, timeout: Duration = .seconds(20), attempts: Int = 3, backoff: Duration = .milliseconds(500),
                        linkUp: (@Sendable () -> Void)? = nil) async throws {
        let changes = try await bus.signals(SignalMatch(sender: Self.service, path: device.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let removals = try await bus.signals(SignalMatch(sender: Self.service, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        let state = try await deviceProperties(device)
        if state["Connected"]?.boolValue == true && state["ServicesResolved"]?.boolValue == true { return }
        if state["Connected"]?.boolValue != true {
            try await callWithRetry(device, member: "Connect", attempts: attempts, backoff: backoff)
        }
        linkUp?()
        try await waitForServices(device, changes: changes, removals: removals, timeout: timeout)
    }

    private func callWithRetry(_ device: DeviceHandle, member: String, attempts: Int, backoff: Duration) async throws {
        var delay = backoff
        for attempt in 1...max(1, attempts) {
            do {
                _ = try await bus.call(destination: Self.service, path: device.path, interface: BlueZInterface.device, member: member, timeout: .seconds(30))
                return
            } catch let error as BusError {
                if error.name == BlueZErrorName.alreadyConnected || error.name == BlueZErrorName.alreadyExists { return }
                let transient = error.name == BlueZErrorName.inProgress || error.message.contains("le-connection-abort-by-local")
                guard transient, attempt < attempts else { throw BlueZError.from(error, device: device) }
                try await Task.sleep(for: delay)
                delay = delay * 2
            }
        }
    }

    private func waitForServices(_ device: DeviceHandle, changes: AsyncStream<DBusSignal>, removals: AsyncStream<DBusSignal>, timeout: Duration) async throws {
        enum Outcome { case resolved, disconnected, removed, timedOut }
        let outcome = await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                for await signal in changes {
                    let changed = signal.arguments.count > 1 ? signal.arguments[1].propertiesValue ?? [:] : [:]
                    if changed["ServicesResolved"]?.boolValue == true { return .resolved }
                    if changed["Connected"]?.boolValue == false { return .disconnected }
                }
                return nil
            }
            group.addTask {
                for await signal in removals where signal.arguments.first?.objectPathValue == device.path { return .removed }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .timedOut
            }
            // ServicesResolved may have turned true between the subscription and now.
            if (try? await deviceProperties(device))?["ServicesResolved"]?.boolValue == true {
                group.cancelAll()
                return Outcome.resolved
            }
            var result = Outcome.timedOut
            for await candidate in group {
                if let candidate { result = candidate; break }
            }
            group.cancelAll()
            return result
        }
        switch outcome {
        case .resolved: return
        case .disconnected: throw BlueZError.disconnected(device.address)
        case .removed: throw BlueZError.deviceNotFound(device.address)
        case .timedOut: throw BlueZError.connectTimedOut(device.address)
        }
    }

    /// Yields one reason, then ends, when the link to `device` is gone: BlueZ reports
    /// Connected = false, the device object is removed, or bluetoothd leaves the bus. A GATT
    /// notification stream alone does not end on any of these.
    public func linkLoss(of device: DeviceHandle) async throws -> AsyncStream<String> {
        let changes = try await bus.signals(SignalMatch(sender: Self.service, path: device.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let removals = try await bus.signals(SignalMatch(sender: Self.service, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        let owners = try await bus.signals(SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        return AsyncStream { continuation in
            let work = Task {
                let reason = await withTaskGroup(of: String?.self, returning: String?.self) { group in
                    group.addTask {
                        for await signal in changes where signal.arguments.count > 1 {
                            if signal.arguments[1].propertiesValue?["Connected"]?.boolValue == false {
                                // A stopping bluetoothd first disconnects its devices; give its exit the chance to be the reason.
                                try? await Task.sleep(for: .milliseconds(500))
                                return "the watch ended the link (BlueZ reports it disconnected)"
                            }
                        }
                        return nil
                    }
                    group.addTask {
                        for await signal in removals where signal.arguments.first?.objectPathValue == device.path {
                            try? await Task.sleep(for: .milliseconds(500))  // as above: bluetoothd's exit removes its objects first
                            return "BlueZ removed the device"
                        }
                        return nil
                    }
                    group.addTask {
                        for await signal in owners where signal.arguments.count == 3 && signal.arguments[0].stringValue == Self.service {
                            if signal.arguments[2].stringValue == "" { return "bluetoothd stopped (it left the system bus); start it again (systemctl start bluetooth) and retry" }
                        }
                        return nil
                    }
                    for await candidate in group {
                        if let candidate { group.cancelAll(); return candidate }
                    }
                    return nil
                }
                if let reason { continuation.yield(reason) }
                continuation.finish()
            }
            continuation.onTermination = { _ in work.cancel() }
        }
    }

    public func pair(_ device: DeviceHandle) async throws {
        try await callWithRetry(device, member: "Pair", attempts: 1, backoff: .zero)
    }

    /// Stops a pairing in progress (BlueZ answers DoesNotExist when none is running; that is fine).
    public func cancelPairing(_ device: DeviceHandle) async throws {
        do { _ = try await bus.call(destination: Self.service, path: device.path, interface: BlueZInterface.device, member: "CancelPairing", timeout: .seconds(5)) }
        catch let error as BusError where error.name != BlueZErrorName.doesNotExist { throw BlueZError.from(error) }
    }

    public func disconnect(_ device: DeviceHandle) async throws {
        do { _ = try await bus.call(destination: Self.service, path: device.path, interface: BlueZInterface.device, member: "Disconnect", timeout: .seconds(10)) }
        catch let error as BusError where error.name != BlueZErrorName.notConnected { throw BlueZError.from(error) }
    }

    /// Marks the device trusted so it may reconnect without asking.
    public func trust(_ device: DeviceHandle) async throws {
        do { try await bus.setProperty(destination: Self.service, path: device.path, interface: BlueZInterface.device, name: "Trusted", value: .boolean(true), timeout: .seconds(5)) }
        catch let error as BusError { throw BlueZError.from(error) }
    }
}
