import Foundation
import TSDBus

/// What happened to a peripheral's registrations after it started.
public enum PeripheralEvent: Sendable {
    /// bluetoothd came back on the bus; the registrations died with the one before.
    case bluetoothdReturned
    case registeredAgain
    case registeringAgainFailed(any Error)
}

/// The peripheral side of BlueZ on one adapter: a GATT application and an LE advertisement,
/// registered again whenever bluetoothd comes back.
public final class BlueZPeripheral: @unchecked Sendable {
    public let bluez: BlueZ
    public let adapter: AdapterInfo
    public let application: GattApplication
    public let advertisement: LEAdvertisement
    private let lock = NSLock()
    private var restartWatcher: Task<Void, Never>?

    public init(bluez: BlueZ, adapter: AdapterInfo, application: GattApplication, advertisement: LEAdvertisement) {
        self.bluez = bluez
        self.adapter = adapter
        self.application = application
        self.advertisement = advertisement
    }

    /// Exports the objects and registers the application and the advertisement with BlueZ;
    /// `events` hears about each later return of bluetoothd and the registration that follows.
    public func start(events: @escaping @Sendable (PeripheralEvent) async -> Void = { _ in }) async throws {
        try bluez.export(application)
        try bluez.export(advertisement)
        try await register()
        // A peripheral keeps advertising whatever happens to the stack: when bluetoothd comes
        // back, register again (its registrations died with it).
        let owners = try await bluez.bus.signals(SignalMatch(sender: StandardBusNames.bus, interface: StandardBusNames.bus, member: "NameOwnerChanged"))
        let watcher = Task { [weak self] in
            for await signal in owners where signal.arguments.count == 3 && signal.arguments[0].stringValue == BlueZ.service {
                guard let self, let owner = signal.arguments[2].stringValue, !owner.isEmpty else { continue }
                await events(.bluetoothdReturned)
                await events(await self.registerAgain())
            }
        }
        lock.withLock { restartWatcher = watcher }
    }

    /// Registers the application, then the advertisement (each AlreadyExists counting as done).
    func register() async throws {
        try await bluez.register(application, adapter: adapter)
        try await bluez.register(advertisement, adapter: adapter)
    }

    /// After bluetoothd restarted: its adapters take a moment to appear, so try for 30 s.
    private func registerAgain() async -> PeripheralEvent {
        var lastError: any Error = BlueZError.noBluetoothd
        for _ in 0..<60 {
            do {
                try await register()
                return .registeredAgain
            } catch {
                lastError = error
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        return .registeringAgainFailed(lastError)
    }

    /// Withdraws the advertisement and registers it again: the controller starts advertising
    /// anew, so a central that began scanning since sees a fresh report.
    public func advertiseAgain() async throws {
        try? await bluez.unregister(advertisement, adapter: adapter)
        try await bluez.register(advertisement, adapter: adapter)
    }

    /// A Value change of the application's characteristic `uuid`, which bluetoothd sends to
    /// the subscribed central as a notification.
    public func notify(_ value: [UInt8], characteristic uuid: String) throws(BusError) {
        guard let path = application.characteristicPath(uuid: uuid) else {
            throw BusError(name: BusError.unknownObject, message: "the GATT application has no characteristic \(uuid)")
        }
        try bluez.notify(value, characteristicAt: path)
    }

    /// Withdraws the advertisement and the application.
    public func stop() async {
        lock.withLock { restartWatcher }?.cancel()
        try? await bluez.unregister(advertisement, adapter: adapter)
        try? await bluez.unregister(application, adapter: adapter)
        bluez.unexport(advertisement)
        bluez.unexport(application)
    }
}

extension BlueZ {
    /// The devices under `adapter` whose link goes down (BlueZ reports Connected = false), as
    /// it happens: how a peripheral learns that its central left.
    public func disconnections(on adapter: AdapterInfo) async throws -> AsyncStream<DeviceHandle> {
        let changes = try await bus.signals(SignalMatch(sender: Self.service, pathNamespace: adapter.path, interface: StandardBusNames.properties, member: "PropertiesChanged"))
        return AsyncStream { continuation in
            let work = Task {
                for await signal in changes where signal.arguments.first?.stringValue == BlueZInterface.device && signal.arguments.count > 1 {
                    if signal.arguments[1].propertiesValue?["Connected"]?.boolValue == false { continuation.yield(DeviceHandle(path: signal.path)) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in work.cancel() }
        }
    }
}
