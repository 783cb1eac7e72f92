import Foundation
import TSModels
import TSGatewayAPI
import TSMQTT

/// Home Assistant MQTT discovery for the watches a gateway serves: one retained config per
/// entity, all on one device per watch, every entity reading the watch's retained state document.
/// The gateway is a device of its own (with a connectivity entity on its status topic), and each
/// watch's device hangs off it (`via_device`).
///
/// Home Assistant validates every config against its schema and refuses the whole message when
/// one value is wrong; a JSON null is never a valid value (it reads as "string value is None"),
/// so a key whose value is not known is left out, never sent as null. The device block carries
/// what the watch says of itself (manufacturer from its Device Information, model, firmware);
/// the bridge publishes a watch's discovery once that is known, and again when it changes
/// (`identity`).
///
/// Entity ids: each config names its entity id twice, `default_entity_id` (`sensor.tsgateway_bedroom_battery`)
/// for Home Assistant 2025.10 and later and `object_id` (`tsgateway_bedroom_battery`) for the releases
/// before, which know only that one and drop the other. With both, 2025.10 … 2026.x use
/// `default_entity_id` and log nothing (`object_id` alone: a deprecation warning per entity, "stops
/// working in 2026.4"; `default_entity_id` alone: ids made from the names on releases before 2025.10).
///
/// A value of the state document that is not known yet (null) renders as "None" in a value
/// template, which Home Assistant shows as unknown; unavailable stays what it means there: the
/// gateway is offline.
public enum HomeAssistantDiscovery {
    /// One Home Assistant entity of a watch.
    public struct Entity: Sendable, Hashable {
        /// `sensor`, `binary_sensor`, or `event` (reads the night's event topic, not the state document).
        public var component: String
        /// The last part of the unique id and of the config topic; never changes for an entity.
        public var key: String
        /// The entity's name as Home Assistant shows it (after the device's name).
        public var name: String
        /// The state document field the entity shows.
        public var field: String
        public var valueTemplate: String
        public var deviceClass: String?
        public var unit: String?
        public var stateClass: String?
        public var category: String?
        public var icon: String?
        /// The states of an `enum` sensor.
        public var options: [String]?
        /// The event types of an `event` entity.
        public var eventTypes: [String]?
    }

    /// The session field's states: "none" stands for the state document's "" (no session yet).
    public static let sessionStates = ["none", "open", "interrupted", "closed", "complete"]

    /// Every entity of a watch. Figures of last night are `measurement`s: each night's value
    /// stands alone (a night is not added to the one before).
    public static let entities: [Entity] = [
        Entity(component: "sensor", key: "battery", name: "Battery", field: "battery",
               valueTemplate: "{{ value_json.battery }}",
               deviceClass: "battery", unit: "%", stateClass: "measurement", category: "diagnostic"),
        Entity(component: "sensor", key: "battery_state", name: "Battery state", field: "battery_state",
               valueTemplate: "{{ value_json.battery_state or 'unknown' }}",
               deviceClass: "enum", category: "diagnostic", icon: "mdi:battery",
               options: BatteryState.allCases.map(\.rawValue)),
        Entity(component: "binary_sensor", key: "connected", name: "Connected", field: "connected",
               valueTemplate: "{{ 'ON' if value_json.connected else 'OFF' }}",
               deviceClass: "connectivity", category: "diagnostic"),
        Entity(component: "sensor", key: "last_sync", name: "Last sync", field: "last_sync",
               valueTemplate: "{{ value_json.last_sync }}",
               deviceClass: "timestamp", category: "diagnostic", icon: "mdi:cloud-sync"),
        Entity(component: "sensor", key: "night_sleep", name: "Last night sleep", field: "night_sleep_minutes",
               valueTemplate: "{{ value_json.night_sleep_minutes }}",
               deviceClass: "duration", unit: "min", stateClass: "measurement", icon: "mdi:sleep"),
        Entity(component: "sensor", key: "night_date", name: "Last night date", field: "night_date",
               valueTemplate: "{{ value_json.night_date }}",
               deviceClass: "date", icon: "mdi:calendar-moon"),
        Entity(component: "sensor", key: "night_quality", name: "Sleep quality", field: "night_quality",
               valueTemplate: "{{ value_json.night_quality }}",
               unit: "points", stateClass: "measurement", icon: "mdi:star-half-full"),
        Entity(component: "sensor", key: "night_deep_share", name: "Deep sleep share", field: "night_deep_share",
               valueTemplate: "{{ value_json.night_deep_share }}",
               unit: "%", stateClass: "measurement", icon: "mdi:power-sleep"),
        Entity(component: "sensor", key: "naps", name: "Naps", field: "naps",
               valueTemplate: "{{ value_json.naps }}",
               stateClass: "measurement", icon: "mdi:bed-clock"),
        Entity(component: "sensor", key: "nap_minutes", name: "Nap time", field: "nap_minutes",
               valueTemplate: "{{ value_json.nap_minutes }}",
               deviceClass: "duration", unit: "min", stateClass: "measurement", icon: "mdi:bed-clock"),
        Entity(component: "sensor", key: "next_alarm", name: "Next alarm", field: "next_alarm",
               valueTemplate: "{{ value_json.next_alarm }}",
               deviceClass: "timestamp", icon: "mdi:alarm"),
        Entity(component: "sensor", key: "heart_rate", name: "Heart rate", field: "heart_rate",
               valueTemplate: "{{ value_json.heart_rate }}",
               unit: "bpm", stateClass: "measurement", icon: "mdi:heart-pulse"),
        Entity(component: "sensor", key: "night_deep_minutes", name: "Deep sleep", field: "night_deep_minutes",
               valueTemplate: "{{ value_json.night_deep_minutes }}",
               deviceClass: "duration", unit: "min", stateClass: "measurement", icon: "mdi:power-sleep"),
        Entity(component: "sensor", key: "night_efficiency", name: "Sleep efficiency", field: "night_efficiency",
               valueTemplate: "{{ value_json.night_efficiency }}",
               unit: "%", stateClass: "measurement", icon: "mdi:percent"),
        Entity(component: "sensor", key: "night_heart_rate", name: "Night heart rate", field: "night_heart_rate",
               valueTemplate: "{{ value_json.night_heart_rate }}",
               unit: "bpm", stateClass: "measurement", icon: "mdi:heart-pulse"),
        Entity(component: "binary_sensor", key: "asleep", name: "Asleep", field: "asleep",
               valueTemplate: "{{ 'ON' if value_json.asleep else 'OFF' }}", icon: "mdi:sleep"),
        // Off while the gateway does not trust the system clock and holds the watch's (the reason is clock_reason and the clock event's).
        Entity(component: "binary_sensor", key: "clock_trusted", name: "Clock trusted", field: "clock_trusted",
               valueTemplate: "{{ 'ON' if value_json.clock_trusted else 'OFF' }}", category: "diagnostic", icon: "mdi:clock-check-outline"),
        // full or read-only while the disk holding the database takes no writes (the reason is storage_reason and the storage event's).
        Entity(component: "sensor", key: "storage", name: "Storage", field: "storage",
               valueTemplate: "{{ value_json.storage }}",
               deviceClass: "enum", category: "diagnostic", icon: "mdi:harddisk", options: ["ok"] + StorageCondition.allCases.map(\.rawValue)),
        Entity(component: "event", key: "night", name: "Night", field: "event_type", valueTemplate: "",
               icon: "mdi:weather-night", eventTypes: NightEvent.Name.allCases.map(\.rawValue)),
        Entity(component: "sensor", key: "session", name: "Sleep session", field: "session",
               valueTemplate: "{{ value_json.session or 'none' }}",
               deviceClass: "enum", icon: "mdi:bed", options: sessionStates),
    ]

    /// What the device block says of a watch; discovery is published again when it changes.
    public static func identity(_ status: WatchStatus) -> String {
        [status.name ?? "", manufacturer(status) ?? "", status.info?.model ?? "", status.info?.firmware ?? ""].joined(separator: "\u{1F}")
    }

    /// Who made the watch, as its Device Information says; nil when it has not said (a watch
    /// without Device Information, or one not reached yet).
    public static func manufacturer(_ status: WatchStatus) -> String? {
        status.info?.standard?.manufacturer.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The identifier of the gateway's own device, which every watch's device names as `via_device`.
    public static func gatewayIdentifier(gatewayId: String) -> String {
        "tsgateway_gateway_" + slug(gatewayId, orElse: "default")
    }

    /// The retained config of the gateway's device: one connectivity entity on the gateway's
    /// status topic (on while `online`; the last will says `offline`).
    public static func gatewayMessages(prefix: String, base: String, gatewayId: String, version: String) -> [MQTTConnection.Message] {
        let identifier = gatewayIdentifier(gatewayId: gatewayId)
        let device = DiscoveryConfig.Device(identifiers: [identifier], name: "tsgateway \(gatewayId)", manufacturer: "tsgateway project",
                                            model: "tsgateway", swVersion: version)
        var config = DiscoveryConfig(name: "Gateway", uniqueId: "\(identifier)_online", objectId: "\(identifier)_online",
                                     defaultEntityId: "binary_sensor.\(identifier)_online",
                                     stateTopic: "\(base)/status", device: device, origin: .init(swVersion: version))
        config.payloadOn = "online"
        config.payloadOff = "offline"
        config.deviceClass = "connectivity"
        config.entityCategory = "diagnostic"
        return [MQTTConnection.Message(topic: "\(prefix)/binary_sensor/\(identifier)/online/config", text: MQTTJSON.text(config), qos: 1, retain: true)]
    }

    /// Lower-case ASCII letters, digits and single underscores of `text`; `fallback` when none is left.
    static func slug(_ text: String, orElse fallback: String) -> String {
        var slug = ""
        for scalar in text.lowercased().unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, !slug.hasSuffix("_") {
                slug += "_"
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        return slug.isEmpty ? fallback : slug
    }

    /// The first part of the entity ids Home Assistant gives a watch's entities: from the watch's
    /// configured name when it has one that makes an id (`bedroom` → `tsgateway_bedroom`), from its
    /// address otherwise. Lower-case ASCII letters, digits and single underscores only.
    public static func objectPrefix(watchKey: String, name: String?) -> String {
        "tsgateway_" + slug(name ?? "", orElse: watchKey)
    }

    /// The retained config messages of one watch. `prefix`: the discovery prefix; `base`: the
    /// gateway's topic base (its `status` is the availability topic); `stateTopic`: the watch's
    /// state document; `gatewayId`: the gateway whose device the watch hangs off.
    public static func messages(prefix: String, base: String, stateTopic: String, nightTopic: String, watchKey: String,
                                status: WatchStatus, gatewayId: String, version: String) -> [MQTTConnection.Message] {
        let device = DiscoveryConfig.Device(
            identifiers: ["tsgateway_\(watchKey)"], name: status.name.flatMap { $0.isEmpty ? nil : $0 } ?? "Watch \(status.id)",
            manufacturer: manufacturer(status), model: status.info.flatMap { $0.model.isEmpty ? nil : $0.model },
            swVersion: status.info.flatMap { $0.firmware.isEmpty ? nil : $0.firmware },
            connections: [["bluetooth", status.id.rawValue.lowercased()]], viaDevice: gatewayIdentifier(gatewayId: gatewayId))
        let objectPrefix = objectPrefix(watchKey: watchKey, name: status.name)
        return entities.map { entity in
            let objectId = "\(objectPrefix)_\(entity.key)"
            var config = DiscoveryConfig(name: entity.name, uniqueId: "tsgateway_\(watchKey)_\(entity.key)", objectId: objectId,
                                         defaultEntityId: "\(entity.component).\(objectId)",
                                         stateTopic: stateTopic, valueTemplate: entity.valueTemplate, device: device, origin: .init(swVersion: version))
            if let eventTypes = entity.eventTypes {
                // An event entity takes `event_type` (and the other keys as attributes) from each message's JSON.
                config.stateTopic = nightTopic
                config.valueTemplate = nil
                config.eventTypes = eventTypes
            }
            config.availabilityTopic = "\(base)/status"
            config.payloadAvailable = "online"
            config.payloadNotAvailable = "offline"
            if entity.component == "binary_sensor" {
                config.payloadOn = "ON"
                config.payloadOff = "OFF"
            }
            config.deviceClass = entity.deviceClass
            config.unitOfMeasurement = entity.unit
            config.stateClass = entity.stateClass
            config.entityCategory = entity.category
            config.icon = entity.icon
            config.options = entity.options
            return MQTTConnection.Message(topic: "\(prefix)/\(entity.component)/tsgateway_\(watchKey)/\(entity.key)/config",
                                          text: MQTTJSON.text(config), qos: 1, retain: true)
        }
    }
}
