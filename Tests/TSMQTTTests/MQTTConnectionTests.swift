import Foundation
import Synchronization
import Testing
import TSMQTT
import TSTestSupport

/// What one client has seen, from libmosquitto's thread.
private final class Seen: Sendable {
    let connects = Atomic<Int>(0)
    let acknowledged = Mutex<[Int32]>([])
    let messages = Mutex<[MQTTConnection.Message]>([])
    let refusals = Mutex<[String]>([])

    func handlers() -> MQTTConnection.Handlers {
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { [self] in connects.add(1, ordering: .sequentiallyConsistent) }
        handlers.published = { [self] mid in acknowledged.withLock { $0.append(mid) } }
        handlers.message = { [self] message in messages.withLock { $0.append(message) } }
        handlers.disconnected = { [self] reason in refusals.withLock { $0.append(reason) } }
        return handlers
    }
}

/// 90 s: in the whole suite on CI's two cores a connect that takes a second alone took over 30.
private func eventually(_ timeout: Duration = .seconds(90), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

@Suite("MQTT connection against a Mosquitto broker", .serialized)
struct MQTTConnectionTests {
    static func options(_ broker: Broker, _ name: String) -> MQTTConnection.Options {
        MQTTConnection.Options(host: "127.0.0.1", port: broker.port, clientId: "\(name)-\(UUID().uuidString.prefix(8))")
    }

    @Test("QoS 1: a publish is acknowledged by its message id and reaches a subscriber; a retained one reaches a later subscriber too")
    func publishSubscribeRetain() async throws {
        let broker = try Broker()
        defer { broker.stop() }
        let listener = Seen(), publisher = Seen()
        let listening = try MQTTConnection(Self.options(broker, "listener"), handlers: listener.handlers())
        try listening.start()
        defer { listening.stop() }
        #expect(try await eventually { listener.connects.load(ordering: .sequentiallyConsistent) == 1 })
        try listening.subscribe("test/#", qos: 1)
        let sending = try MQTTConnection(Self.options(broker, "publisher"), handlers: publisher.handlers())
        try sending.start()
        defer { sending.stop() }
        #expect(try await eventually { sending.isConnected })
        try await Task.sleep(for: .milliseconds(200))  // the subscription reaches the broker

        let mid = try sending.publish(MQTTConnection.Message(topic: "test/a", text: "héllo", qos: 1, retain: true))
        #expect(try await eventually { publisher.acknowledged.withLock { $0.contains(mid) } }, "no PUBACK for message \(mid)")
        #expect(try await eventually { listener.messages.withLock { $0.contains { $0.topic == "test/a" && $0.text == "héllo" } } })

        let late = Seen()
        let lateConnection = try MQTTConnection(Self.options(broker, "late"), handlers: late.handlers())
        try lateConnection.start()
        defer { lateConnection.stop() }
        #expect(try await eventually { lateConnection.isConnected })
        try lateConnection.subscribe("test/a", qos: 1)
        #expect(try await eventually { late.messages.withLock { $0.contains { $0.topic == "test/a" && $0.retain && $0.text == "héllo" } } })
    }

    @Test("a broker that wants a password refuses a wrong one and says why; the right one connects")
    func credentials() async throws {
        let broker = try Broker(users: ["gateway": "s3cret"])
        defer { broker.stop() }
        let wrong = Seen()
        var options = Self.options(broker, "wrong")
        options.username = "gateway"
        options.password = "nope"
        let refused = try MQTTConnection(options, handlers: wrong.handlers())
        try refused.start()
        #expect(try await eventually { !wrong.refusals.withLock { $0.isEmpty } })
        #expect(wrong.connects.load(ordering: .sequentiallyConsistent) == 0 && !refused.isConnected)
        #expect(wrong.refusals.withLock { $0.first?.localizedCaseInsensitiveContains("authori") == true }, "\(wrong.refusals.withLock { $0 })")
        refused.stop()

        // A client id of its own: the refused client's, still winding down, would make the broker
        // drop this one when it came back (a takeover), and it would connect twice.
        var rightOptions = Self.options(broker, "right")
        rightOptions.username = "gateway"
        rightOptions.password = "s3cret"
        let right = Seen()
        let accepted = try MQTTConnection(rightOptions, handlers: right.handlers())
        try accepted.start()
        defer { accepted.stop() }
        #expect(try await eventually { accepted.isConnected && right.connects.load(ordering: .sequentiallyConsistent) == 1 })
    }
}
