import Foundation
import TSDBus
import TSModels

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
        guard let wanted = WatchID(address) else { throw BlueZError.deviceNotFound(address) }
        guard let path = objects.first(where: { path, interfaces in
            path.hasPrefix(adapter.path + "/") && interfaces[BlueZInterface.device]?["Address"]?.stringValue.flatMap(WatchID.init) == wanted
        })?.key else { throw BlueZError.deviceNotFound(address) }
        return DeviceHandle(path: path, address: wanted.rawValue)
    }

    /// The service UUIDs BlueZ lists for the device with `address` (Device1.UUIDs: advertised,
    /// or resolved on an earlier connect), without connecting.
    public func serviceUUIDs(address: String, adapter name: String?) async throws -> [String] {
        let device = try await device(address: address, adapter: try await adapter(name))
        return try await deviceProperties(device)["UUIDs"]?.stringArrayValue ?? []
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
    ///
    /// A link that drops before its services are resolved is connected once more after
    /// `backoff`, and so is one still up when `timeout` ends without them, after a Disconnect
    /// (the second try has its own `timeout`): nothing was asked of the watch yet. bluetoothd
    /// 5.66 now and then fails to raise a bonded device's new ATT socket's security
    /// ("device_attach_att() bt_io_set: setsockopt(BT_SECURITY): Invalid argument"); the link then
    /// drops ("disconnected while connecting") or stays up without its services ("did not finish
    /// connecting in time"). Seen in the e2e VM: after a bluetoothd restart, before a sleep sync,
    /// before an alarms set; each time exit 75.
    public func connect(_ device: DeviceHandle, timeout: Duration = .seconds(20), attempts: Int = 3, backoff: Duration = .milliseconds(500),
                        linkUp: (@Sendable () -> Void)? = nil) async throws {
        do {
            try await connectOnce(device, timeout: timeout, attempts: attempts, backoff: backoff, linkUp: linkUp)
            return
        } catch BlueZError.disconnected {
        } catch BlueZError.connectTimedOut {
            guard (try? await deviceProperties(device))?["Connected"]?.boolValue == true else { throw BlueZError.connectTimedOut(device.address) }
            try? await disconnect(device)
        }
        try await Task.sleep(for: backoff)
        try await connectOnce(device, timeout: timeout, attempts: attempts, backoff: backoff, linkUp: linkUp)
    }

    /// One connect: its own subscriptions (a wait that ended cancelled its streams).
    private func connectOnce(_ device: DeviceHandle, timeout: Duration, attempts: Int, backoff: Duration,
                             linkUp: (@Sendable () -> Void)?) async throws {
        let changes = try await bus.signals(SignalMatch(sender: Self.service, path: device.path, interface: StandardBusNames.properties, member: "PropertiesChanged"))
        let removals = try await bus.signals(SignalMatch(sender: Self.service, interface: StandardBusNames.objectManager, member: "InterfacesRemoved"))
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

    public static let linkLossGrace: Duration = .seconds(1)
    public static let linkLossShutdownGrace: Duration = .seconds(5)

    /// Yields one reason, then ends, when the link to `device` is gone: BlueZ reports
    /// Connected = false, the device object is removed, or bluetoothd leaves the bus. A GATT
    /// notification stream alone does not end on any of these.
    ///
    /// A stopping bluetoothd first disconnects its devices, powers its adapters off and removes
    /// its objects, and only then leaves the bus; with many GATT objects on a slow machine that
    /// takes a second or more. So a disconnect is named after `grace`, or, when the watch's
    /// adapter powers off meanwhile, after up to `shutdownGrace` more for bluetoothd to leave:
    /// bluetoothd stopping if it left, else the adapter powered off, else the watch's link.
    public func linkLoss(of device: DeviceHandle, grace: Duration = linkLossGrace, shutdownGrace: Duration = linkLossShutdownGrace) async throws -> AsyncStream<String> {
        let adapterPath = String(device.path[..<(device.path.lastIndex(of: "/") ?? device.path.endIndex)])
        let adapterName = adapterPath.split(separator: "/").last.map(String.init) ?? "the adapter"
        let changes = try await bus.signals(SignalMatch(sender: Self.service, path: device.path, interface: StandardBusNames.properties, member: "PropertiesChanged"))
        let adapterChanges = try await bus.signals(SignalMatch(sender: Self.service, path: adapterPath, interface: StandardBusNames.properties, member: "PropertiesChanged"))
        let removals = try await bus.signals(SignalMatch(sender: Self.service, interface: StandardBusNames.objectManager, member: "InterfacesRemoved"))
        let owners = try await bus.signals(SignalMatch(sender: StandardBusNames.bus, interface: StandardBusNames.bus, member: "NameOwnerChanged"))
        let (events, sink) = AsyncStream.makeStream(of: LinkEvent.self)
        let sources = [
            Task {
                for await signal in changes where signal.arguments.count > 1 && signal.arguments[0].stringValue == BlueZInterface.device {
                    if signal.arguments[1].propertiesValue?["Connected"]?.boolValue == false { sink.yield(.disconnected) }
                }
            },
            Task {
                for await signal in adapterChanges where signal.arguments.count > 1 && signal.arguments[0].stringValue == BlueZInterface.adapter {
                    if signal.arguments[1].propertiesValue?["Powered"]?.boolValue == false { sink.yield(.adapterPoweredOff) }
                }
            },
            Task {
                for await signal in removals where signal.arguments.first?.objectPathValue == device.path { sink.yield(.removed) }
            },
            Task {
                for await signal in owners where signal.arguments.count == 3 && signal.arguments[0].stringValue == Self.service {
                    if signal.arguments[2].stringValue == "" { sink.yield(.bluetoothdLeft) }
                }
            },
        ]
        // Our own connection closing ends every source: name what was already heard, if anything.
        let ended = Task {
            for source in sources { await source.value }
            sink.yield(.sourcesEnded)
            sink.finish()
        }
        return AsyncStream { continuation in
            let work = Task {
                var decision = LinkLossDecision()
                var deadline: Task<Void, Never>?
                for await event in events {
                    let step = decision.next(event)
                    if let reason = step.reason {
                        continuation.yield(reason.text(adapter: adapterName))
                        break
                    }
                    if let wait = step.wait {
                        deadline?.cancel()
                        let generation = decision.generation
                        let period = wait == .grace ? grace : shutdownGrace
                        deadline = Task { if (try? await Task.sleep(for: period)) != nil { sink.yield(.deadline(generation)) } }
                    }
                }
                deadline?.cancel()
                sources.forEach { $0.cancel() }
                ended.cancel()
                continuation.finish()
            }
            continuation.onTermination = { _ in
                work.cancel()
                sources.forEach { $0.cancel() }
                ended.cancel()
                sink.finish()
            }
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

/// What `BlueZ.linkLoss(of:)` hears about a link.
enum LinkEvent: Sendable, Equatable {
    case disconnected, removed, adapterPoweredOff, bluetoothdLeft
    /// Nothing more will be heard (the gateway's own bus connection closed).
    case sourcesEnded
    /// The wait begun as `generation` ran out.
    case deadline(Int)
}

/// Names why a link ended from the events in the order they came (pure, so it is tested alone).
struct LinkLossDecision {
    enum Wait { case grace, shutdownGrace }
    enum Reason: Equatable {
        case bluetoothdStopped, adapterPoweredOff, disconnected, removed

        func text(adapter: String) -> String {
            switch self {
            case .bluetoothdStopped: "bluetoothd stopped (it left the system bus); start it again (systemctl start bluetooth) and retry"
            case .adapterPoweredOff: "\(adapter) was powered off; `tsgateway adapter power on --adapter \(adapter)` and retry"
            case .disconnected: "the watch ended the link (BlueZ reports it disconnected)"
            case .removed: "BlueZ removed the device"
            }
        }
    }

    private var lost: Reason?
    private var adapterOff = false
    private var waitingForShutdown = false
    /// Counts the waits begun; a deadline of an earlier wait is ignored.
    private(set) var generation = 0

    /// The reason when it is known, else the wait to begin (if any).
    mutating func next(_ event: LinkEvent) -> (reason: Reason?, wait: Wait?) {
        switch event {
        case .bluetoothdLeft:
            return (.bluetoothdStopped, nil)
        case .disconnected, .removed:
            guard lost == nil else { return (nil, nil) }
            lost = event == .removed ? .removed : .disconnected
            if adapterOff { return startShutdownWait() }
            generation += 1
            return (nil, .grace)
        case .adapterPoweredOff:
            adapterOff = true
            guard lost != nil, !waitingForShutdown else { return (nil, nil) }
            return startShutdownWait()
        case let .deadline(of):
            guard of == generation, let lost else { return (nil, nil) }
            return (adapterOff ? .adapterPoweredOff : lost, nil)
        case .sourcesEnded:
            guard let lost else { return (nil, nil) }
            return (adapterOff ? .adapterPoweredOff : lost, nil)
        }
    }

    private mutating func startShutdownWait() -> (reason: Reason?, wait: Wait?) {
        waitingForShutdown = true
        generation += 1
        return (nil, .shutdownGrace)
    }
}
