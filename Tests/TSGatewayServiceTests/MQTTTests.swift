import Foundation
import Synchronization
import TSDBus
@testable import TSGatewayAPI
import TSGatewayService
import TSMQTT
import TSModels
import TSTestSupport
import Testing

/// A test client that records every message it receives.
final class Subscriber: Sendable {
    final class Locked<Value: Sendable>: Sendable {
        let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        func with<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
    }

    let connection: MQTTConnection
    let received = Locked<[MQTTConnection.Message]>([])

    /// `persistent`: the broker keeps the subscription and queues QoS 1 messages while it is away.
    init(port: Int, pattern: String = "#", persistent: Bool = false, username: String? = nil, password: String? = nil, caFile: String? = nil) throws {
        let received = self.received
        let box = Locked<MQTTConnection?>(nil)
        var handlers = MQTTConnection.Handlers()
        handlers.message = { message in received.with { $0.append(message) } }
        handlers.connected = { box.with { try? $0?.subscribe(pattern, qos: 1) } }
        var options = MQTTConnection.Options(host: "127.0.0.1", port: port, clientId: "test-\(UUID().uuidString.prefix(8))")
        options.cleanSession = !persistent
        options.username = username
        options.password = password
        options.caFile = caFile
        connection = try MQTTConnection(options, handlers: handlers)
        box.with { $0 = connection }
        try connection.start()
    }

    func messages(_ topic: String) -> [MQTTConnection.Message] { received.with { $0.filter { $0.topic == topic } } }
    func last(_ topic: String) -> MQTTConnection.Message? { messages(topic).last }

    func json(_ topic: String) -> [String: Any]? {
        last(topic).flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }

    func publish(_ topic: String, _ text: String) throws {
        try connection.publish(MQTTConnection.Message(topic: topic, text: text, qos: 1, retain: false))
    }
}

@Suite("MQTT and Home Assistant", .serialized)
struct MQTTTests {
    static func daemon(broker: Broker, gateway: String = "gw1", watches: [String] = DaemonTests.twoWatches, credentials: String = "") throws -> DaemonProcess {
        try DaemonProcess(watches: watches, extraConfig: """
            mqtt:
              host: 127.0.0.1
              port: \(broker.port)
              topic-prefix: home
              gateway-id: \(gateway)
              keepalive: 5\(credentials)
            """)
    }

    static let watchKey = "00005e005401"

    @Test("discovery configs as Home Assistant expects them, the state document, and availability with a last will")
    func discoveryStateAvailability() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker)
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        let battery = "homeassistant/sensor/tsgateway_\(Self.watchKey)/battery/config"
        #expect(try await eventually { subscriber.json(battery) != nil && subscriber.json("home/gw1/watch/\(Self.watchKey)/state")?["night_sleep_minutes"] is Int })
        let config = try #require(subscriber.json(battery))
        #expect(config["unique_id"] as? String == "tsgateway_\(Self.watchKey)_battery")
        #expect(config["state_topic"] as? String == "home/gw1/watch/\(Self.watchKey)/state")
        #expect(config["value_template"] as? String == "{{ value_json.battery }}")
        #expect(config["device_class"] as? String == "battery" && config["unit_of_measurement"] as? String == "%")
        #expect(config["availability_topic"] as? String == "home/gw1/status")
        let device = try #require(config["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["tsgateway_\(Self.watchKey)"])
        // The manufacturer is what the watch's Device Information says (the simulator's), and the
        // watch hangs off the gateway's own device.
        #expect(device["manufacturer"] as? String == "tsgateway project" && device["name"] as? String == "sim-a")
        #expect(device["via_device"] as? String == "tsgateway_gateway_gw1")
        let gateway = try #require(subscriber.json("homeassistant/binary_sensor/tsgateway_gateway_gw1/online/config"))
        #expect(gateway["state_topic"] as? String == "home/gw1/status" && gateway["payload_on"] as? String == "online" && gateway["payload_off"] as? String == "offline")
        #expect((gateway["device"] as? [String: Any])?["identifiers"] as? [String] == ["tsgateway_gateway_gw1"])
        #expect(gateway["default_entity_id"] as? String == "binary_sensor.tsgateway_gateway_gw1_online" && gateway["object_id"] as? String == "tsgateway_gateway_gw1_online")
        // Retained: a client that subscribes later gets the configs from the broker.
        let late = try Subscriber(port: broker.port, pattern: "homeassistant/#")
        #expect(try await eventually { late.last(battery)?.retain == true })
        for sensor in ["sensor/tsgateway_\(Self.watchKey)/night_sleep", "sensor/tsgateway_\(Self.watchKey)/night_quality",
                       "sensor/tsgateway_\(Self.watchKey)/night_deep_share", "sensor/tsgateway_\(Self.watchKey)/naps",
                       "sensor/tsgateway_\(Self.watchKey)/next_alarm", "binary_sensor/tsgateway_\(Self.watchKey)/connected",
                       "sensor/tsgateway_00005e005402/battery"] {
            #expect(subscriber.json("homeassistant/\(sensor)/config") != nil, "no discovery config for \(sensor)")
        }
        #expect(subscriber.json("homeassistant/binary_sensor/tsgateway_\(Self.watchKey)/connected/config")?["device_class"] as? String == "connectivity")
        #expect(subscriber.json("homeassistant/sensor/tsgateway_\(Self.watchKey)/next_alarm/config")?["device_class"] as? String == "timestamp")

        let state = try #require(subscriber.json("home/gw1/watch/\(Self.watchKey)/state"))
        #expect(state["watch"] as? String == "00:00:5E:00:54:01" && state["battery"] as? Int == 82 && state["connected"] as? Bool == true)
        #expect((state["night_sleep_minutes"] as? Int ?? 0) > 0 && state["night_quality"] is Int && state["night_deep_share"] is Int && state["naps"] is Int)
        // The simulated watch's alarm: Work, 06:45 on workdays.
        let next = try #require(state["next_alarm"] as? String)
        #expect(next.contains("T06:45:00"))
        #expect(subscriber.last("home/gw1/status")?.text == "online")

        // A clean stop says offline; a killed gateway's last will says it too.
        await daemon.stop()
        #expect(try await eventually { subscriber.last("home/gw1/status")?.text == "offline" })
        try await daemon.start()
        #expect(try await eventually { subscriber.last("home/gw1/status")?.text == "online" })
        daemon.signal(SIGKILL)
        #expect(try await eventually(timeout: .seconds(90)) { subscriber.last("home/gw1/status")?.text == "offline" })
        await daemon.cleanUp()
    }

    @Test("an untrusted system clock: the state says clock_trusted false with the reason, a clock event says it once, no scheduled sync runs; trusted after a restart")
    func untrustedClock() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker, watches: [DaemonTests.twoWatches[0]])
        daemon.extraEnvironment = ["TSGATEWAY_CLOCK": "untrusted"]
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        let stateTopic = "home/gw1/watch/\(Self.watchKey)/state"
        #expect(try await eventually { subscriber.json(stateTopic)?["connected"] as? Bool == true && subscriber.json(stateTopic)?["clock_trusted"] as? Bool == false },
                "\(subscriber.json(stateTopic) ?? [:])")
        let state = try #require(subscriber.json(stateTopic))
        #expect((state["clock_reason"] as? String)?.contains("TSGATEWAY_CLOCK=untrusted says the system clock") == true)
        #expect(try await eventually { !subscriber.messages("home/gw1/watch/\(Self.watchKey)/event/clock").isEmpty })
        // Long enough for a scheduled sync and many looks at the clock.
        try await Task.sleep(for: .seconds(2))
        let events = subscriber.messages("home/gw1/watch/\(Self.watchKey)/event/clock").map { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
        #expect(events.count == 1 && events.first??["trusted"] as? Bool == false && events.first??["type"] as? String == "clock")
        #expect(subscriber.messages("home/gw1/watch/\(Self.watchKey)/event/sleep_synced").isEmpty)
        #expect(subscriber.json(stateTopic)?["last_sync"] is NSNull)
        #expect(daemon.log().contains("no watch's clock is set from it"))
        await daemon.stop()

        daemon.extraEnvironment = ["TSGATEWAY_CLOCK": "trusted"]
        try await daemon.start()
        #expect(try await eventually { subscriber.json(stateTopic)?["clock_trusted"] as? Bool == true && subscriber.json(stateTopic)?["last_sync"] is String })
        #expect(subscriber.json(stateTopic)?["clock_reason"] is NSNull)
        await daemon.cleanUp()
    }

    /// Every path to a JSON null in `value` ("device.sw_version", "options[2]"); Home Assistant
    /// refuses a discovery config with any null in it.
    static func nullPaths(_ value: Any, _ path: String = "") -> [String] {
        switch value {
        case is NSNull: return [path.isEmpty ? "(the payload)" : path]
        case let object as [String: Any]: return object.flatMap { nullPaths($0.value, path.isEmpty ? $0.key : "\(path).\($0.key)") }
        case let array as [Any]: return array.enumerated().flatMap { nullPaths($0.element, "\(path)[\($0.offset)]") }
        default: return []
        }
    }

    static func discoveryMessages(_ subscriber: Subscriber) -> [MQTTConnection.Message] {
        subscriber.received.with { $0.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") } }
    }

    @Test("no discovery payload holds a null; a watch not reached yet is published once, when it has said its model and firmware")
    func discoveryWithoutNullsAndWithIdentity() async throws {
        let broker = try Broker()
        // The first watch answers slowly, so the bridge meets the broker before the watch has said
        // what it is (a fresh database knows nothing of it either).
        let daemon = try Self.daemon(broker: broker, watches: ["simulated: true\nname: sim-a\npacket-delay: 300ms", "simulated: true\nseed: 7"])
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        let battery = "homeassistant/sensor/tsgateway_\(Self.watchKey)/battery/config"
        #expect(try await eventually {
            (subscriber.json(battery)?["device"] as? [String: Any])?["sw_version"] as? String == "1.4.2"
        }, "the battery config never carried the firmware: \(subscriber.last(battery)?.text ?? "nothing")")
        let device = try #require(subscriber.json(battery)?["device"] as? [String: Any])
        #expect(device["model"] as? String == "TS-Sim W10" && device["name"] as? String == "sim-a")
        // The second watch (no configured name) gets its device block too.
        #expect(try await eventually {
            (subscriber.json("homeassistant/sensor/tsgateway_00005e005402/battery/config")?["device"] as? [String: Any])?["model"] as? String == "TS-Sim W10"
        })
        // Once, complete: no config of the slow watch went out before it had said what it is.
        let batteryConfigs = subscriber.messages(battery)
        #expect(batteryConfigs.count == 1, "\(batteryConfigs.map(\.text))")
        // A watch's configs go out one after the other: its battery config may come before the rest
        // (CI saw 30 of 37 at that moment under load), so wait for all of them.
        let expected = 2 * HomeAssistantDiscovery.entities.count + 1
        #expect(try await eventually { Self.discoveryMessages(subscriber).count >= expected },
                "only \(Self.discoveryMessages(subscriber).count) of \(expected) discovery configs arrived")
        let messages = Self.discoveryMessages(subscriber)
        for message in messages {
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any], "\(message.topic): not a JSON object")
            #expect(Self.nullPaths(payload).isEmpty, "\(message.topic) has null at \(Self.nullPaths(payload)): \(message.text)")
        }
        await daemon.cleanUp()
    }

    @Test("Home Assistant's birth message (homeassistant/status online) makes the bridge publish discovery and state again")
    func birthMessage() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker)
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        let battery = "homeassistant/sensor/tsgateway_\(Self.watchKey)/battery/config"
        let state = "home/gw1/watch/\(Self.watchKey)/state"
        // Let the start settle (each watch's discovery goes out once it is known), then count.
        #expect(try await eventually {
            !subscriber.messages(state).isEmpty && [Self.watchKey, "00005e005402"].allSatisfy { key in
                (subscriber.json("homeassistant/sensor/tsgateway_\(key)/battery/config")?["device"] as? [String: Any])?["sw_version"] != nil
            }
        }, "discovery without firmware; log:\n\(daemon.log())\nconfigs: \(subscriber.messages("homeassistant/sensor/tsgateway_00005e005402/battery/config").map(\.text))")
        try await Task.sleep(for: .seconds(1))
        let configsBefore = subscriber.messages(battery).count
        let statesBefore = subscriber.messages(state).count
        try subscriber.publish("homeassistant/status", "offline")
        try await Task.sleep(for: .seconds(1))
        #expect(subscriber.messages(battery).count == configsBefore, "an offline Home Assistant is not a reason to publish discovery")
        try subscriber.publish("homeassistant/status", "online")
        #expect(try await eventually { subscriber.messages(battery).count > configsBefore },
                "no discovery after the birth message; log:\n\(daemon.log())")
        #expect(try await eventually { subscriber.messages("homeassistant/binary_sensor/tsgateway_00005e005402/connected/config").count >= 2 })
        #expect(try await eventually { subscriber.messages(state).count > statesBefore })
        await daemon.cleanUp()
    }

    @Test("discovery configs carry state classes, units and categories as Home Assistant expects, an entity per state field, and readable object ids")
    func discoveryEntities() throws {
        var status = WatchStatus(id: WatchID("00:00:5E:00:54:01")!, name: "Bedroom Watch", simulated: true)
        var components: [String: String] = [:]  // entity key: the component of its config topic
        func configs() throws -> [String: [String: Any]] {
            let messages = HomeAssistantDiscovery.messages(prefix: "homeassistant", base: "tsgateway/gw", stateTopic: "tsgateway/gw/watch/00005e005401/state",
                                                           nightTopic: "tsgateway/gw/watch/00005e005401/event/night", watchKey: Self.watchKey, status: status,
                                                           gatewayId: "gw", version: "1")
            var result: [String: [String: Any]] = [:]
            for message in messages {
                let config = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
                #expect(Self.nullPaths(config).isEmpty, "\(message.topic): \(message.text)")
                #expect(message.retain)
                let parts = message.topic.split(separator: "/").map(String.init)
                result[parts.dropLast().last ?? ""] = config
                components[parts.dropLast().last ?? ""] = parts.count > 1 ? parts[1] : ""
            }
            return result
        }
        // Before the watch has said what it is: no model, no firmware, no manufacturer, and no null for them.
        var all = try configs()
        var device = try #require(all["battery"]?["device"] as? [String: Any])
        #expect(device["model"] == nil && device["sw_version"] == nil && device["manufacturer"] == nil && device["name"] as? String == "Bedroom Watch")
        #expect(device["via_device"] as? String == "tsgateway_gateway_gw")
        let capabilities = WatchCapabilities(alarms: .init(maxCount: 8, labelMaxBytes: 32, snooze: true), naps: true, liveStages: true)
        status.info = DeviceInfo(model: "TS-W10", firmware: "2.0.1", capabilities: capabilities)
        all = try configs()
        device = try #require(all["battery"]?["device"] as? [String: Any])
        #expect(device["model"] as? String == "TS-W10" && device["sw_version"] as? String == "2.0.1" && device["manufacturer"] == nil)
        // The manufacturer is the one the watch's Device Information names, never a constant.
        var information = StandardDeviceInformation()
        information.manufacturer = "Acme Wearables"
        status.info = DeviceInfo(model: "TS-W10", firmware: "2.0.1", capabilities: capabilities, standard: information)
        all = try configs()
        #expect((all["battery"]?["device"] as? [String: Any])?["manufacturer"] as? String == "Acme Wearables")

        // Every field of the state document but the watch's own id and name has an entity.
        let fields = ["connected", "battery", "battery_state", "last_sync", "night_date", "night_sleep_minutes", "night_quality",
                      "night_deep_share", "night_deep_minutes", "night_efficiency", "night_heart_rate", "naps", "nap_minutes", "next_alarm", "session", "heart_rate", "asleep", "clock_trusted", "storage"]
        for field in fields {
            #expect(all.values.contains { ($0["value_template"] as? String)?.contains("value_json.\(field) ") == true }, "no entity shows \(field)")
        }
        // key: (device class, unit, state class, category)
        let expected: [String: (String?, String?, String?, String?)] = [
            "battery": ("battery", "%", "measurement", "diagnostic"),
            "battery_state": ("enum", nil, nil, "diagnostic"),
            "connected": ("connectivity", nil, nil, "diagnostic"),
            "last_sync": ("timestamp", nil, nil, "diagnostic"),
            "night_sleep": ("duration", "min", "measurement", nil),
            "night_date": ("date", nil, nil, nil),
            "night_quality": (nil, "points", "measurement", nil),
            "night_deep_share": (nil, "%", "measurement", nil),
            "naps": (nil, nil, "measurement", nil),
            "nap_minutes": ("duration", "min", "measurement", nil),
            "next_alarm": ("timestamp", nil, nil, nil),
            "session": ("enum", nil, nil, nil),
            // Home Assistant has no heart-rate device class; bpm is the unit its own integrations use.
            "heart_rate": (nil, "bpm", "measurement", nil),
            "night_deep_minutes": ("duration", "min", "measurement", nil),
            "night_efficiency": (nil, "%", "measurement", nil),
            "night_heart_rate": (nil, "bpm", "measurement", nil),
            "asleep": (nil, nil, nil, nil),
            "clock_trusted": (nil, nil, nil, "diagnostic"),
            "storage": ("enum", nil, nil, "diagnostic"),
            "night": (nil, nil, nil, nil),
        ]
        #expect(Set(all.keys) == Set(expected.keys))
        for (key, (deviceClass, unit, stateClass, category)) in expected {
            let config = try #require(all[key], "no config for \(key)")
            #expect(config["device_class"] as? String == deviceClass, "\(key): device_class")
            #expect(config["unit_of_measurement"] as? String == unit, "\(key): unit")
            #expect(config["state_class"] as? String == stateClass, "\(key): state_class")
            #expect(config["entity_category"] as? String == category, "\(key): entity_category")
            // Unique ids as before; entity ids from the configured name.
            #expect(config["unique_id"] as? String == "tsgateway_\(Self.watchKey)_\(key)")
            // The entity id twice: whole for Home Assistant 2025.10 and later, its object part for the releases before.
            let domain = ["connected": "binary_sensor", "asleep": "binary_sensor", "clock_trusted": "binary_sensor", "night": "event"][key] ?? "sensor"
            #expect(components[key] == domain, "\(key): config topic's component")
            #expect(config["default_entity_id"] as? String == "\(domain).tsgateway_bedroom_watch_\(key)", "\(key): default_entity_id")
            #expect(config["object_id"] as? String == "tsgateway_bedroom_watch_\(key)", "\(key): object_id")
            if deviceClass == "enum" { #expect((config["options"] as? [String])?.isEmpty == false, "\(key): an enum needs its options") }
        }
        // Every entity is available exactly while the gateway is online: a value not known yet
        // (null in the state document, "None" in the template) is unknown, not unavailable.
        for (key, config) in all {
            #expect(config["availability_topic"] as? String == "tsgateway/gw/status" && config["availability"] == nil, "\(key)")
        }
        // The battery state's icon says nothing the state does not (it said charging while discharging).
        #expect(all["battery_state"]?["icon"] as? String == "mdi:battery")
        #expect(all["battery_state"]?["options"] as? [String] == ["unknown", "discharging", "charging", "full"])
        #expect(all["session"]?["options"] as? [String] == ["none", "open", "interrupted", "closed", "complete"])
        // The night's events: an event entity on their own topic, every name of the vocabulary as an event type.
        let night = try #require(all["night"])
        #expect(night["state_topic"] as? String == "tsgateway/gw/watch/00005e005401/event/night" && night["value_template"] == nil)
        #expect(night["event_types"] as? [String] == NightEvent.Name.allCases.map(\.rawValue))
        #expect((night["event_types"] as? [String])?.contains("sleep_tracking_started") == true)
        // Without a name, or with one that makes no id, the address names the entities.
        #expect(HomeAssistantDiscovery.objectPrefix(watchKey: Self.watchKey, name: nil) == "tsgateway_\(Self.watchKey)")
        #expect(HomeAssistantDiscovery.objectPrefix(watchKey: Self.watchKey, name: "—") == "tsgateway_\(Self.watchKey)")
        #expect(HomeAssistantDiscovery.objectPrefix(watchKey: Self.watchKey, name: " Anna's  watch! ") == "tsgateway_anna_s_watch")
    }

    @Test("a command sets alarms and is answered on the reply topic; a bad command is refused with the reason")
    func commandRoundTrip() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker)
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        #expect(try await eventually { subscriber.last("home/gw1/status")?.text == "online" })
        let base = "home/gw1/watch/\(Self.watchKey)"
        // The gateway is online before its watch is connected; a command before that is refused (not connected).
        #expect(try await eventually { subscriber.json("\(base)/state")?["connected"] as? Bool == true })
        try subscriber.publish("\(base)/command/alarms/set", #"{"id": "c1", "alarms": [{"time": "07:30", "repeat": ["mon", "thu"], "label": "Gym", "snooze": true}]}"#)
        #expect(try await eventually { subscriber.messages("\(base)/command/reply").contains { $0.text.contains("\"c1\"") } })
        let reply = try #require(subscriber.json("\(base)/command/reply"))
        #expect(reply["ok"] as? Bool == true && reply["command"] as? String == "alarms/set")
        let client = GatewayClient(connection: try BusConnection(.address(daemon.bus.address)))
        defer { client.close() }
        let alarms = try await client.watch(WatchID("00:00:5E:00:54:01")!).alarms()
        #expect(alarms.map { "\($0.label) \($0.hour):\($0.minute) \($0.repeatDays.rawValue) \($0.snoozeAllowed)" } == ["Gym 7:30 9 true"])
        // The change is announced as an event and in the state (the next alarm).
        #expect(try await eventually { subscriber.json("\(base)/state")?["next_alarm"].map { "\($0)".contains("T07:30:00") } == true })

        for (id, payload, reason) in [
            ("c2", #"{"id": "c2", "alarms": [{"time": "25:00"}]}"#, "hour 25 is out of range"),
            ("c3", #"{"id": "c3", "alarms": [{"time": "07:00", "label": "\#(String(repeating: "x", count: 40))"}]}"#, "label"),
        ] {
            try subscriber.publish("\(base)/command/alarms/set", payload)
            #expect(try await eventually { subscriber.messages("\(base)/command/reply").contains { $0.text.contains("\"\(id)\"") } })
            let refused = try #require(subscriber.messages("\(base)/command/reply").last { $0.text.contains("\"\(id)\"") })
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(refused.payload)) as? [String: Any])
            #expect(answer["ok"] as? Bool == false)
            #expect((answer["error"] as? String)?.contains(reason) == true, "\(refused.text)")
        }
        // Not even JSON: the reply has no id to echo, but says what was wrong.
        try subscriber.publish("\(base)/command/alarms/set", #"{"id": "c4", "alarms": "#)
        #expect(try await eventually { subscriber.messages("\(base)/command/reply").contains { $0.text.contains("not an alarm table") } })
        #expect(try await client.watch(WatchID("00:00:5E:00:54:01")!).alarms().map(\.label) == ["Gym"])
        try subscriber.publish("home/gw1/watch/ffffffffffff/command/alarms/set", #"{"id": "c5", "alarms": []}"#)
        #expect(try await eventually { subscriber.last("home/gw1/watch/ffffffffffff/command/reply")?.text.contains("no watch ffffffffffff") == true })
        await daemon.cleanUp()
    }

    @Test("commands in quick succession: each is answered exactly once")
    func everyCommandAnsweredOnce() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker)
        let subscriber = try Subscriber(port: broker.port)
        try await daemon.start()
        #expect(try await eventually { subscriber.last("home/gw1/status")?.text == "online" })
        let base = "home/gw1/watch/\(Self.watchKey)"
        let ids = (1...24).map { "q\($0)" }
        for (index, id) in ids.enumerated() {
            try subscriber.publish("\(base)/command/alarms/set", #"{"id": "\#(id)", "alarms": [{"time": "07:\#(10 + index)"}]}"#)
        }
        func replies(_ id: String) -> Int { subscriber.messages("\(base)/command/reply").filter { $0.text.contains("\"\(id)\"") }.count }
        #expect(try await eventually { ids.allSatisfy { replies($0) >= 1 } })
        // A second publication of a reply would follow within the queue's next flushes.
        try await Task.sleep(for: .seconds(2))
        #expect(ids.filter { replies($0) != 1 } == [], "\(ids.map { "\($0): \(replies($0))" })")
        await daemon.cleanUp()
    }

    @Test("messages produced while the broker is down are delivered after it comes back, none lost")
    func brokerRestart() async throws {
        let broker = try Broker()
        let daemon = try Self.daemon(broker: broker)
        let subscriber = try Subscriber(port: broker.port, pattern: "home/#", persistent: true)
        try await daemon.start()
        #expect(try await eventually { subscriber.last("home/gw1/status")?.text == "online" && subscriber.last("home/gw1/watch/\(Self.watchKey)/state") != nil })
        broker.stop()
        #expect(try await eventually { daemon.log().contains("MQTT: connection lost") }, "broker running: \(broker.isRunning); \(daemon.log())")
        // Both simulated watches edit an alarm while the broker is away: two events wait in the queue.
        daemon.signal(SIGUSR1)
        let store = try daemon.store()
        #expect(try await eventually { try await store.queuedMQTTCount() >= 4 })
        try broker.start()
        for key in [Self.watchKey, "00005e005402"] {
            #expect(try await eventually(timeout: .seconds(90)) { !subscriber.messages("home/gw1/watch/\(key)/event/alarms_changed").isEmpty },
                    "the alarm event of \(key) never arrived")
        }
        let event = try #require(subscriber.messages("home/gw1/watch/\(Self.watchKey)/event/alarms_changed").first)
        #expect(try GatewayEvent.decode(json: event.text).alarmOrigin == .watch)
        #expect(try await eventually { try await store.queuedMQTTCount() == 0 })

        // Again, and this time the gateway stops too before the broker is back: the queue is in
        // the database, and the next gateway process sends it.
        broker.stop()
        #expect(try await eventually { daemon.log().components(separatedBy: "MQTT: connection lost").count >= 3 })
        daemon.signal(SIGUSR1)
        #expect(try await eventually { try await store.queuedMQTTCount() >= 4 })
        await daemon.stop()
        try broker.start()
        try await daemon.start()
        for key in [Self.watchKey, "00005e005402"] {
            #expect(try await eventually(timeout: .seconds(90)) { subscriber.messages("home/gw1/watch/\(key)/event/alarms_changed").count >= 2 },
                    "the second alarm event of \(key) never arrived")
        }
        #expect(try await eventually { try await store.queuedMQTTCount() == 0 })
        await daemon.cleanUp()
    }

    @Test("two gateways on one broker keep to their own topics; the watch ids stay the same on both")
    func fleet() async throws {
        let broker = try Broker()
        let first = try Self.daemon(broker: broker, gateway: "kitchen", watches: ["simulated: true\nname: a"])
        let second = try Self.daemon(broker: broker, gateway: "bedroom", watches: ["simulated: true\nname: b\naddress: 00:00:5E:00:54:09"])
        let subscriber = try Subscriber(port: broker.port)
        try await first.start()
        try await second.start()
        #expect(try await eventually {
            subscriber.last("home/kitchen/status")?.text == "online" && subscriber.last("home/bedroom/status")?.text == "online"
                && subscriber.last("home/kitchen/watch/\(Self.watchKey)/state") != nil && subscriber.last("home/bedroom/watch/00005e005409/state") != nil
                // A watch's discovery goes out once it has said what it is.
                && subscriber.json("homeassistant/sensor/tsgateway_00005e005409/battery/config") != nil
        })
        #expect(subscriber.last("home/kitchen/watch/00005e005409/state") == nil)
        #expect(subscriber.last("home/bedroom/watch/\(Self.watchKey)/state") == nil)
        #expect(subscriber.json("homeassistant/sensor/tsgateway_00005e005409/battery/config")?["availability_topic"] as? String == "home/bedroom/status")
        await first.stop()
        #expect(try await eventually { subscriber.last("home/kitchen/status")?.text == "offline" })
        #expect(subscriber.last("home/bedroom/status")?.text == "online")
        await first.cleanUp()
        await second.cleanUp()
    }

    @Test("a broker that wants a user name and password: the right ones connect, wrong ones are refused and said so")
    func usernameAndPassword() async throws {
        let broker = try Broker(users: ["gateway": "s3cret", "viewer": "look"])
        let subscriber = try Subscriber(port: broker.port, username: "viewer", password: "look")
        let wrong = try Self.daemon(broker: broker, gateway: "wrong", watches: ["simulated: true\nname: a"],
                                    credentials: "\n  username: gateway\n  password: nope")
        try await wrong.start()
        #expect(try await eventually { wrong.log().contains("refused the connection") && wrong.log().contains("authori") }, "\(wrong.log())")
        #expect(subscriber.last("home/wrong/status") == nil)
        await wrong.cleanUp()
        let right = try Self.daemon(broker: broker, gateway: "right", watches: ["simulated: true\nname: a"],
                                    credentials: "\n  username: gateway\n  password: s3cret")
        try await right.start()
        #expect(try await eventually { subscriber.last("home/right/status")?.text == "online" }, "\(right.log())")
        await right.cleanUp()
    }

    @Test("TLS: the gateway verifies the broker with the configured CA and publishes over the encrypted link")
    func tls() async throws {
        let broker = try Broker(users: ["gateway": "s3cret"], tls: true)
        let ca = broker.directory.appendingPathComponent("ca.crt").path
        let subscriber = try Subscriber(port: broker.port, username: "gateway", password: "s3cret", caFile: ca)
        let daemon = try Self.daemon(broker: broker, gateway: "tls", watches: ["simulated: true\nname: a"],
                                     credentials: "\n  username: gateway\n  password: s3cret\n  ca-file: \(ca)")
        try await daemon.start()
        #expect(try await eventually { subscriber.last("home/tls/status")?.text == "online" && subscriber.last("home/tls/watch/\(Self.watchKey)/state") != nil },
                "\(daemon.log())")
        await daemon.cleanUp()
    }
}
