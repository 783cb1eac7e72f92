import Foundation
@testable import TSGatewayAPI
@testable import TSGatewayService
import TSModels
import Testing

@Suite("MQTT documents")
struct MQTTDocumentTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("the state document has every key always; what is not known is null, so a template reads None (unknown)")
    func stateDocumentNulls() throws {
        let unknown = MQTTStateDocument(watch: WatchID("AA:BB:CC:DD:EE:FF")!, connected: false, asleep: false, night: LastNightFigures())
        let object = try Self.object(MQTTJSON.text(unknown))
        let keys = ["watch", "name", "dialect", "connected", "battery", "battery_state", "last_sync", "session", "heart_rate", "asleep", "next_alarm",
                    "night_date", "night_sleep_minutes", "night_quality", "night_deep_share", "night_deep_minutes", "night_efficiency",
                    "night_heart_rate", "naps", "nap_minutes", "clock_trusted", "clock_reason", "storage", "storage_reason"]
        #expect(Set(object.keys) == Set(keys))
        for key in keys where !["watch", "connected", "asleep", "clock_trusted", "storage"].contains(key) {
            #expect(object[key] is NSNull, "\(key): \(object[key] ?? "missing")")
        }
        #expect(object["clock_trusted"] as? Bool == true)
        #expect(object["storage"] as? String == "ok")
        // Every field of the document but the watch's identity (id, name, dialect) and the reason
        // behind clock_trusted (too long for an entity's state: the clock event carries it) has an entity that shows it.
        for key in keys where !["watch", "name", "dialect", "clock_reason", "storage_reason"].contains(key) {
            #expect(HomeAssistantDiscovery.entities.contains { $0.valueTemplate.contains("value_json.\(key) ") }, "no entity shows \(key)")
        }

        var figures = LastNightFigures()
        figures.efficiency = 88
        figures.heartRate = 56.7
        let known = MQTTStateDocument(watch: WatchID("AA:BB:CC:DD:EE:FF")!, name: "bedroom", dialect: "npk", connected: true, battery: 80, batteryState: "discharging",
                                      asleep: true, nextAlarm: "2026-11-24T06:45:00+01:00", night: figures)
        let filled = try Self.object(MQTTJSON.text(known))
        #expect(filled["battery"] as? Int == 80 && filled["night_efficiency"] as? Int == 88 && filled["night_heart_rate"] as? Double == 56.7)
        #expect(filled["next_alarm"] as? String == "2026-11-24T06:45:00+01:00" && filled["asleep"] as? Bool == true)
        #expect(filled["dialect"] as? String == "npk")

        var held = known
        held.clockTrusted = false
        held.clockReason = "the system clock (2026-01-01T00:00:00Z) is not synchronised yet (systemd-timesyncd runs and has not synchronised it)"
        let heldObject = try Self.object(MQTTJSON.text(held))
        #expect(heldObject["clock_trusted"] as? Bool == false && heldObject["clock_reason"] as? String == held.clockReason)

        var full = known
        full.storage = StorageCondition.full.rawValue
        full.storageReason = StorageUnwritable(.full, directory: "/var/lib/tsgateway").description
        let fullObject = try Self.object(MQTTJSON.text(full))
        #expect(fullObject["storage"] as? String == "full" && fullObject["storage_reason"] as? String == full.storageReason)
    }

    @Test("a night message: event_type and time, stage and alarm_slot only where the event has them")
    func nightMessage() throws {
        let time = Date(timeIntervalSince1970: 1_763_700_000)
        let phase = try Self.object(MQTTJSON.text(MQTTNightMessage(NightEvent(.deepSleep, stage: .deep), time: time)))
        #expect(phase["event_type"] as? String == "deep_sleep" && phase["stage"] as? String == "deep" && phase["alarm_slot"] == nil)
        #expect(phase["time"] as? String == "2025-11-21T04:40:00Z")
    }

    @Test("a command reply echoes the id (null without one) and says the error only on failure; ids may be strings or numbers")
    func commandReply() throws {
        let failed = try Self.object(MQTTJSON.text(MQTTCommandReply(id: nil, command: "alarms/set", ok: false, error: "bad time")))
        #expect(failed["id"] is NSNull && failed["ok"] as? Bool == false && failed["error"] as? String == "bad time")
        let done = try Self.object(MQTTJSON.text(MQTTCommandReply(id: "7", command: "sleep/sync", ok: true)))
        #expect(done["id"] as? String == "7" && done["error"] == nil)
        for (body, id) in [(#"{"id": "a-1"}"#, "a-1"), (#"{"id": 42, "alarms": []}"#, "42")] {
            #expect(try JSONDecoder().decode(MQTTCommandEnvelope.self, from: Data(body.utf8)).id?.text == id)
        }
        #expect(try JSONDecoder().decode(MQTTCommandEnvelope.self, from: Data("{}".utf8)).id == nil)
    }
}
