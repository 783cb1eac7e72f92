import Foundation
import TSDBus
import TSDevice
@testable import TSGatewayAPI
import TSModels
import TSWatchService
import Testing

/// dbus-api.md, "Names": every key of an `a{sv}` is PascalCase (API version 3).
@Suite("D-Bus dictionary keys")
struct DBusKeyTests {
    static func isPascalCase(_ key: String) -> Bool {
        key.first?.isUppercase == true && key.allSatisfy { $0.isLetter || $0.isNumber }
    }

    @Test("SyncSleep's and DailySleep's options and results round-trip under PascalCase keys")
    func roundTrip() throws {
        let request = SyncRequest(from: 1_763_600_000, to: 1_763_686_400, reconnects: 3)
        let options = GatewayBusAPI.syncOptions(request)
        #expect(Set(options.keys) == ["From", "To", "Reconnects"])
        #expect(try GatewayBusAPI.syncRequest(options) == request)
        let result = SleepSyncReport(fetched: 188, stored: 12, deletedOnWatch: 0, reconnects: 1, enqueued: 2, heartRateFetched: 2016, heartRateStored: 288)
        let answer = GatewayBusAPI.dictionary(result)
        #expect(Set(answer.keys) == ["Fetched", "Stored", "DeletedOnWatch", "Reconnects", "Enqueued", "HeartRateFetched", "HeartRateStored"])
        #expect(GatewayBusAPI.syncResult(answer) == result)
        let daily = GatewayBusAPI.dailySleepOptions(timeZone: TimeZone(identifier: "Europe/Berlin"), rule: .withNap)
        #expect(Set(daily.keys) == ["TimeZone", "Rule"])
        let (zone, rule) = try GatewayBusAPI.dailySleepOptions(daily)
        #expect(zone?.identifier == "Europe/Berlin" && rule == .withNap)
    }

    @Test("Capabilities round-trip: every part of WatchCapabilities, a watch without alarms or sleep, and nothing before the watch was reached")
    func capabilitiesRoundTrip() {
        let full = WatchCapabilities(alarms: .init(maxCount: 10, labelMaxBytes: 32, remarkMaxBytes: 64, snooze: true, maxSmartWindow: 60),
                                     monitorTypes: [.heartRate, .sleep], sleepSync: .init(selection: .watchCursor, paged: true, deletesSynced: true, acknowledges: true),
                                     statisticsRule: .longestNight, naps: true, liveStages: true, ring: true, alarmAlerts: true, battery: true,
                                     batteryNotifications: true, clock: true, heartRate: true, heartRateHistory: true)
        let ring = WatchCapabilities(monitorTypes: [.heartRate], battery: true, clock: true, heartRate: true, heartRateHistory: true)
        for capabilities in [full, ring] {
            let values = GatewayBusAPI.capabilities(capabilities)
            #expect(GatewayBusAPI.capabilities(values) == capabilities)
            #expect(values.keys.allSatisfy(Self.isPascalCase))
        }
        #expect(GatewayBusAPI.capabilities(ring)["Alarms"] == nil && GatewayBusAPI.capabilities(ring)["SleepSync"] == nil)
        #expect(GatewayBusAPI.capabilities([:]) == nil)
    }

    @Test("a version-2 key is refused with the keys there are")
    func oldKeysAreRefused() {
        let sync = #expect(throws: BusError.self) { try GatewayBusAPI.syncRequest(["reconnects": .uint32(2)]) }
        #expect(sync?.name == "org.tsgateway.Error.InvalidArguments" && sync?.message.contains("From (x), To (x), Reconnects (u)") == true)
        let daily = #expect(throws: BusError.self) { try GatewayBusAPI.dailySleepOptions(["time_zone": .string("UTC")]) }
        #expect(daily?.message.contains("TimeZone (s), Rule (y)") == true)
    }

    @Test("every key the encoders write is PascalCase")
    func everyKeyIsPascalCase() {
        var status = WatchStatus(id: WatchID("AA:BB:CC:DD:EE:FF")!, name: "bedroom", simulated: true)
        status.batteryLevel = 80
        status.heartRate = 60
        let sample = HeartRateSample(time: Date(), bpm: 60, sensorContact: .detected, energyExpended: 5, rrIntervals: [1000])
        let keys = Array(GatewayBusAPI.dictionary(status).keys) + Array(GatewayBusAPI.dictionary(sample).keys)
            + Array(GatewayBusAPI.syncOptions(SyncRequest(from: 0, to: 1, reconnects: 1)).keys)
            + Array(GatewayBusAPI.dictionary(SleepSyncReport(fetched: 0, stored: 0, deletedOnWatch: 0, reconnects: 0, enqueued: 0)).keys)
            + Array(GatewayBusAPI.dailySleepOptions(timeZone: .gmt, rule: .withNap).keys)
            + Array(GatewayBusAPI.details(NightEvent(.alarmAlertStart, stage: .light, alarmSlot: 1)).keys)
        #expect(keys.count > 20)
        #expect(keys.filter { !Self.isPascalCase($0) } == [])
    }
}
