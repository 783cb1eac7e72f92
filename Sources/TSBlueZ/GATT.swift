import Foundation
import TSDBus

/// A GATT characteristic as BlueZ exports it (org.bluez.GattCharacteristic1).
public struct GattCharacteristic: Sendable, Hashable {
    public var path: String
    public var uuid: String
    public var serviceUUID: String
    public var flags: [String]
    /// The ATT MTU BlueZ negotiated for this characteristic's link; 23 when not reported.
    public var mtu: Int
}

extension BlueZ {
    /// The characteristics of a connected device, with the UUID of the service each belongs to.
    public func characteristics(of device: DeviceHandle) async throws -> [GattCharacteristic] {
        let objects: [String: [String: DBusProperties]]
        do { objects = try await bus.managedObjects(destination: Self.service, timeout: BlueZ.replyTimeout) } catch let error as BusError { throw BlueZError.from(error) }
        let services = objects.compactMapValues { $0[BlueZInterface.gattService]?["UUID"]?.stringValue }
        return objects.compactMap { path, interfaces -> GattCharacteristic? in
            guard path.hasPrefix(device.path + "/"), let properties = interfaces[BlueZInterface.gattCharacteristic],
                  let uuid = properties["UUID"]?.stringValue else { return nil }
            let servicePath = properties["Service"]?.objectPathValue ?? ""
            let mtu = properties["MTU"]?.uint16Value.map(Int.init) ?? 23
            return GattCharacteristic(path: path, uuid: uuid.lowercased(), serviceUUID: (services[servicePath] ?? "").lowercased(),
                                      flags: properties["Flags"]?.stringArrayValue ?? [], mtu: max(23, mtu))
        }.sorted { $0.path < $1.path }
    }

    /// The characteristic `uuid` of service `serviceUUID`, or a clear error.
    public func characteristic(of device: DeviceHandle, service serviceUUID: String, uuid: String) async throws -> GattCharacteristic {
        let all = try await characteristics(of: device)
        guard let found = all.first(where: { $0.serviceUUID == serviceUUID.lowercased() && $0.uuid == uuid.lowercased() }) else {
            throw BlueZError.failed(name: BlueZErrorName.doesNotExist,
                                    message: "\(device.address) has no characteristic \(uuid) in service \(serviceUUID); is it a TopStep-family watch?")
        }
        return found
    }

    /// WriteValue with `type` command (write without response) or request.
    public func write(_ bytes: [UInt8], to characteristic: GattCharacteristic, withResponse: Bool) async throws {
        do {
            _ = try await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic, member: "WriteValue",
                                   [.bytes(bytes), .properties(["type": .string(withResponse ? "request" : "command")])], timeout: .seconds(10))
        } catch let error as BusError { throw BlueZError.from(error) }
    }

    public func read(_ characteristic: GattCharacteristic) async throws -> [UInt8] {
        let reply: [DBusValue]
        do {
            reply = try await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic, member: "ReadValue",
                                       [.properties([:])], timeout: .seconds(10))
        } catch let error as BusError { throw BlueZError.from(error) }
        guard reply.count == 1, reply[0].signature == "ay", let bytes = reply[0].byteArrayValue else {
            throw BlueZError.failed(name: BusError.invalidSignature, message: "ReadValue replied with \"\(reply.map(\.signature).joined())\", expected \"ay\"")
        }
        return bytes
    }

    /// A socket for writes without response from AcquireWrite when BlueZ offers it; nil when it
    /// does not (then use `write(_:to:withResponse:)`). The caller owns and closes the socket.
    public func acquireWrite(_ characteristic: GattCharacteristic) async throws -> (fd: Int32, mtu: Int)? {
        do {
            let reply = try await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic,
                                           member: "AcquireWrite", [.properties([:])], timeout: .seconds(10))
            guard reply.count == 2, case let .unixFD(fd) = reply[0] else {
                throw BlueZError.failed(name: BusError.invalidSignature, message: "AcquireWrite replied with \"\(reply.map(\.signature).joined())\", expected \"hq\"")
            }
            return (fd, Int(reply[1].uint16Value ?? 23))
        } catch let error as BusError where [BusError.unknownMethod, BlueZErrorName.notSupported, BlueZErrorName.notPermitted, BlueZErrorName.failed].contains(error.name) {
            return nil
        } catch let error as BusError {
            throw BlueZError.from(error)
        }
    }

    /// Notifications through a socket from AcquireNotify when BlueZ offers it (one datagram per
    /// notification, no D-Bus traffic per packet); otherwise `notifications(of:)`.
    public func acquiredOrSignalledNotifications(of characteristic: GattCharacteristic) async throws -> AsyncStream<[UInt8]> {
        do {
            let reply = try await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic,
                                           member: "AcquireNotify", [.properties([:])], timeout: .seconds(10))
            guard reply.count == 2, case let .unixFD(fd) = reply[0] else {
                throw BlueZError.failed(name: BusError.invalidSignature, message: "AcquireNotify replied with \"\(reply.map(\.signature).joined())\", expected \"hq\"")
            }
            return SocketReader.datagrams(from: fd, size: Int(reply[1].uint16Value ?? 517) + 8)
        } catch let error as BusError where [BusError.unknownMethod, BlueZErrorName.notSupported, BlueZErrorName.notPermitted, BlueZErrorName.failed].contains(error.name) {
            return try await notifications(of: characteristic)
        } catch let error as BusError {
            throw BlueZError.from(error)
        }
    }

    /// Value changes of a characteristic: subscribes to PropertiesChanged first, then StartNotify;
    /// ending the stream sends StopNotify. Each call gives one stream, so a reconnect that calls
    /// it again does not duplicate deliveries.
    public func notifications(of characteristic: GattCharacteristic) async throws -> AsyncStream<[UInt8]> {
        let changes = try await bus.signals(SignalMatch(sender: Self.service, path: characteristic.path,
                                                        interface: StandardBusNames.properties, member: "PropertiesChanged"))
        do {
            _ = try await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic, member: "StartNotify", timeout: .seconds(10))
        } catch let error as BusError where error.name != BlueZErrorName.inProgress {
            throw BlueZError.from(error)
        }
        let bus = self.bus
        return AsyncStream { continuation in
            let task = Task {
                for await signal in changes where signal.arguments.first?.stringValue == BlueZInterface.gattCharacteristic {
                    if let value = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue { continuation.yield(value) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                task.cancel()
                Task { _ = try? await bus.call(destination: Self.service, path: characteristic.path, interface: BlueZInterface.gattCharacteristic, member: "StopNotify", timeout: BlueZ.replyTimeout) }
            }
        }
    }
}

/// Reads datagrams from a socket BlueZ handed over, on a thread of its own; the stream ends
/// when the socket closes, and ending the stream closes the socket.
enum SocketReader {
    /// bluetoothd hands out its socket pairs non-blocking; the reader thread wants to block on read.
    static func makeBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    static func datagrams(from fd: Int32, size: Int) -> AsyncStream<[UInt8]> {
        makeBlocking(fd)
        return AsyncStream { continuation in
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: max(size, 32))
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    continuation.yield(Array(buffer[0..<count]))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
            thread.start()
        }
    }
}
