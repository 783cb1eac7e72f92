import Foundation
import TSGatewayAPI
import TSModels

// The JSON documents the MQTT bridge publishes, as types. Their keys are snake_case, as Home
// Assistant's templates and event entity read them; event messages are GatewayEvent's JSON,
// the shape `tsgateway events` and D-Bus share.

/// Last night's figures: from the store when a sync brings records. Unknown is nil.
struct LastNightFigures: Sendable, Hashable {
    var date: String?
    var sleepMinutes: Int?
    var quality: Int?
    var deepShare: Int?
    var deepMinutes: Int?
    var efficiency: Int?
    var heartRate: Double?
    var naps: Int?
    var napMinutes: Int?
}

/// The retained state document of a watch (`P/watch/W/state`): flat keys, so that Home
/// Assistant's templates stay simple; every key always present, null for what is unknown
/// (a template reads it as None, which Home Assistant shows as unknown).
struct MQTTStateDocument: Encodable, Sendable, Hashable {
    var watch: WatchID
    var name: String?
    var dialect: String?
    var connected: Bool
    var battery: Int?
    var batteryState: String?
    var lastSync: String?
    var session: String?
    var heartRate: Int?
    var asleep: Bool
    var nextAlarm: String?
    var night: LastNightFigures
    /// False while the gateway does not trust the system clock and so holds the watch's clock
    /// and scheduled syncs; `clockReason` says why (null when trusted).
    var clockTrusted = true
    var clockReason: String?
    /// `ok`, or why the disk holding the gateway's database takes no writes (`full`, `read-only`:
    /// nothing is acknowledged to the watch meanwhile); `storageReason` says what to do (null when ok).
    var storage = "ok"
    var storageReason: String?

    enum CodingKeys: String, CodingKey {
        case watch, name, dialect, connected, battery, batteryState = "battery_state", lastSync = "last_sync", session
        case heartRate = "heart_rate", asleep, nextAlarm = "next_alarm"
        case nightDate = "night_date", nightSleepMinutes = "night_sleep_minutes", nightQuality = "night_quality"
        case nightDeepShare = "night_deep_share", nightDeepMinutes = "night_deep_minutes", nightEfficiency = "night_efficiency"
        case nightHeartRate = "night_heart_rate", naps, napMinutes = "nap_minutes"
        case clockTrusted = "clock_trusted", clockReason = "clock_reason"
        case storage, storageReason = "storage_reason"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // `encode` of an Optional writes null; Home Assistant's templates need the key.
        try container.encode(watch, forKey: .watch)
        try container.encode(name, forKey: .name)
        try container.encode(dialect, forKey: .dialect)
        try container.encode(connected, forKey: .connected)
        try container.encode(battery, forKey: .battery)
        try container.encode(batteryState, forKey: .batteryState)
        try container.encode(lastSync, forKey: .lastSync)
        try container.encode(session, forKey: .session)
        try container.encode(heartRate, forKey: .heartRate)
        try container.encode(asleep, forKey: .asleep)
        try container.encode(nextAlarm, forKey: .nextAlarm)
        try container.encode(night.date, forKey: .nightDate)
        try container.encode(night.sleepMinutes, forKey: .nightSleepMinutes)
        try container.encode(night.quality, forKey: .nightQuality)
        try container.encode(night.deepShare, forKey: .nightDeepShare)
        try container.encode(night.deepMinutes, forKey: .nightDeepMinutes)
        try container.encode(night.efficiency, forKey: .nightEfficiency)
        try container.encode(night.heartRate, forKey: .nightHeartRate)
        try container.encode(night.naps, forKey: .naps)
        try container.encode(night.napMinutes, forKey: .napMinutes)
        try container.encode(clockTrusted, forKey: .clockTrusted)
        try container.encode(clockReason, forKey: .clockReason)
        try container.encode(storage, forKey: .storage)
        try container.encode(storageReason, forKey: .storageReason)
    }
}

/// One of the night's events on `P/watch/W/event/night`: `event_type` is the key Home
/// Assistant's MQTT event entity takes the event from; the others become its attributes.
struct MQTTNightMessage: Codable, Sendable, Hashable {
    var eventType: String
    var time: String
    var stage: String?
    var alarmSlot: Int?

    enum CodingKeys: String, CodingKey {
        case eventType = "event_type", time, stage, alarmSlot = "alarm_slot"
    }

    init(_ night: NightEvent, time: Date) {
        eventType = night.name.rawValue
        self.time = ISO8601DateFormatter().string(from: time)
        stage = night.stage?.name
        alarmSlot = night.alarmSlot
    }
}

/// A command's `id`, echoed in the reply: any JSON string or number the sender chose.
struct MQTTCommandID: Decodable, Sendable, Hashable {
    var text: String

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let string = try? value.decode(String.self) {
            text = string
        } else if let integer = try? value.decode(Int64.self) {
            text = String(integer)
        } else {
            text = String(try value.decode(Double.self))
        }
    }
}

/// What a command message carries besides its body: the id to answer with.
struct MQTTCommandEnvelope: Decodable, Sendable {
    var id: MQTTCommandID?
}

/// The answer on `P/watch/W/command/reply`: `id` null when the command had none.
struct MQTTCommandReply: Encodable, Sendable, Hashable {
    var id: String?
    var command: String
    var ok: Bool
    var error: String?

    enum CodingKeys: String, CodingKey { case id, command, ok, error }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(command, forKey: .command)
        try container.encode(ok, forKey: .ok)
        try container.encodeIfPresent(error, forKey: .error)
    }
}

enum MQTTJSON {
    static let encoder = JSONCoding.encoder()

    /// The JSON text of `value`; these documents hold only strings, numbers and booleans, which always encode.
    static func text(_ value: some Encodable) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// A Home Assistant MQTT discovery config. What is not known is left out (nil), never null:
/// Home Assistant refuses a config with a null in it.
struct DiscoveryConfig: Encodable, Sendable, Hashable {
    struct Device: Encodable, Sendable, Hashable {
        var identifiers: [String]
        var name: String
        var manufacturer: String?
        var model: String?
        var swVersion: String?
        var connections: [[String]]?
        var viaDevice: String?

        enum CodingKeys: String, CodingKey {
            case identifiers, name, manufacturer, model, swVersion = "sw_version", connections, viaDevice = "via_device"
        }
    }

    struct Origin: Encodable, Sendable, Hashable {
        var name = "tsgateway"
        var swVersion: String

        enum CodingKeys: String, CodingKey { case name, swVersion = "sw_version" }
    }

    var name: String
    var uniqueId: String
    /// The entity id's object part (`tsgateway_bedroom_battery`): what Home Assistant before 2025.10
    /// makes the entity id from (it drops `default_entity_id`, unknown to it).
    var objectId: String
    /// The whole entity id (`sensor.tsgateway_bedroom_battery`): what Home Assistant 2025.10 and
    /// later make it from. With it present they take `object_id` for nothing and log no warning;
    /// `object_id` alone makes 2025.10 … 2026.3 warn that it stops working in 2026.4.
    var defaultEntityId: String
    var stateTopic: String
    var valueTemplate: String?
    var device: Device
    var origin: Origin
    var eventTypes: [String]?
    var availabilityTopic: String?
    var payloadAvailable: String?
    var payloadNotAvailable: String?
    var payloadOn: String?
    var payloadOff: String?
    var deviceClass: String?
    var unitOfMeasurement: String?
    var stateClass: String?
    var entityCategory: String?
    var icon: String?
    var options: [String]?

    enum CodingKeys: String, CodingKey {
        case name, uniqueId = "unique_id", objectId = "object_id", defaultEntityId = "default_entity_id", stateTopic = "state_topic", valueTemplate = "value_template"
        case device, origin, eventTypes = "event_types", availabilityTopic = "availability_topic"
        case payloadAvailable = "payload_available", payloadNotAvailable = "payload_not_available"
        case payloadOn = "payload_on", payloadOff = "payload_off", deviceClass = "device_class"
        case unitOfMeasurement = "unit_of_measurement", stateClass = "state_class", entityCategory = "entity_category", icon, options
    }
}
