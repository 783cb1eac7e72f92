import CDBus
import Foundation
import Synchronization

/// A received signal.
public struct DBusSignal: Sendable {
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
}

/// Which signals to receive. Nil fields match anything; `pathNamespace` matches a path and
/// everything below it.
public struct SignalMatch: Sendable, Hashable {
    public var sender: String?
    public var path: String?
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?

    public init(sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil, member: String? = nil) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
    }

    /// The bus's match rule for AddMatch.
    var rule: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace, pathNamespace != "/" { parts.append("path_namespace='\(pathNamespace)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        return parts.joined(separator: ",")
    }

    /// The sender is checked by the bus (it resolves well-known names); the rest here.
    func matches(path candidate: String, interface candidateInterface: String, member candidateMember: String) -> Bool {
        if let path, path != candidate { return false }
        if let pathNamespace, pathNamespace != "/", candidate != pathNamespace, !candidate.hasPrefix(pathNamespace + "/") { return false }
        if let interface, interface != candidateInterface { return false }
        if let member, member != candidateMember { return false }
        return true
    }
}

/// Routes incoming messages (on the loop thread) to signal subscribers and exported objects.
final class MessageRouter: @unchecked Sendable {
    struct Subscription {
        var match: SignalMatch
        var continuation: AsyncStream<DBusSignal>.Continuation
    }

    private let subscriptions = Mutex<[UUID: Subscription]>([:])
    let objects = Mutex<ExportedObjects>(ExportedObjects())
    weak var connection: BusConnection?

    func subscribe(_ match: SignalMatch) -> (UUID, AsyncStream<DBusSignal>) {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .bufferingNewest(1024))
        let id = UUID()
        subscriptions.withLock { $0[id] = Subscription(match: match, continuation: continuation) }
        return (id, stream)
    }

    func unsubscribe(_ id: UUID) -> SignalMatch? {
        subscriptions.withLock { $0.removeValue(forKey: id) }?.match
    }

    func finishAll() {
        for subscription in subscriptions.withLock({ all in defer { all.removeAll() }; return Array(all.values) }) {
            subscription.continuation.finish()
        }
    }

    /// True when the message was handled here.
    func route(_ raw: OpaquePointer) -> Bool {
        dbus_message_ref(raw)
        let message = DBusMessage(adopting: raw)
        switch message.type {
        case DBUS_MESSAGE_TYPE_SIGNAL:
            let path = message.path ?? "", interface = message.interface ?? "", member = message.member ?? ""
            if interface == StandardBusNames.local && member == "Disconnected" {
                finishAll()
                return true
            }
            let interested = subscriptions.withLock { all in
                all.values.filter { $0.match.matches(path: path, interface: interface, member: member) }.map(\.continuation)
            }
            guard !interested.isEmpty, let arguments = try? message.arguments() else { return false }
            let signal = DBusSignal(sender: message.sender ?? "", path: path, interface: interface, member: member, arguments: arguments)
            for continuation in interested { continuation.yield(signal) }
            return false
        case DBUS_MESSAGE_TYPE_METHOD_CALL:
            guard let connection else { return false }
            return ExportedObjects.handle(message, router: self, connection: connection)
        default:
            return false
        }
    }
}

extension BusConnection {
    /// Signals matching `match`, from the moment this returns (the bus has the rule by then).
    public func signals(_ match: SignalMatch) async throws -> AsyncStream<DBusSignal> {
        let (id, stream) = router.subscribe(match)
        do {
            _ = try await call(destination: StandardBusNames.bus, path: StandardBusNames.busPath, interface: StandardBusNames.bus,
                               member: "AddMatch", [.string(match.rule)])
        } catch {
            _ = router.unsubscribe(id)
            throw error
        }
        return AsyncStream { continuation in
            let task = Task {
                for await signal in stream { continuation.yield(signal) }
                continuation.finish()
            }
            continuation.onTermination = { [weak self] _ in
                task.cancel()
                guard let self, let match = self.router.unsubscribe(id), !self.isClosed else { return }
                Task { _ = try? await self.call(destination: StandardBusNames.bus, path: StandardBusNames.busPath, interface: StandardBusNames.bus,
                                                  member: "RemoveMatch", [.string(match.rule)]) }
            }
        }
    }
}
