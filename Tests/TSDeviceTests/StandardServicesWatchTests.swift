import Foundation
import TSDevice
import TSGATT
import TSModels
import TSProtocol
import TSProtocolV1Watch
import TSSimulator
import TSTransport
import Testing

/// A watch is served by what GATT discovery found: protocol v1, standard services, or both.
@Suite struct StandardServicesWatchTests {
    /// A watch with standard services only (as BlueZ's example-gatt-server, or a band); the
    /// request timeout is long, so a protocol v1 request that waited for an answer would hang.
    static func standardOnly(_ characteristics: Set<StandardCharacteristic> = Set(StandardCharacteristic.allCases), name: String? = nil) throws -> (Watch, SimulatedStandardServices) {
        let services = SimulatedStandardServices(characteristics: characteristics)
        var configuration = WatchConfiguration()
        configuration.requestTimeout = .seconds(600)
        configuration.timeZone = Rig.berlin
        configuration.now = { Rig.now }
        let transport = LoopbackTransport(peripheral: SimulatedWatch(), mtu: try ATTMTU(247), standard: services, hasProtocolV1: false, name: name)
        return (Watch(transport: transport, configuration: configuration), services)
    }

    /// A band without Device Information strings (BlueZ's example peripheral: bluetoothd's own
    /// Device Information service has none) is called by the name it gives itself; Device
    /// Information's model, when there is one, comes first.
    @Test func aWatchWithoutAModelStringIsCalledByItsName() async throws {
        let (unnamed, _) = try Self.standardOnly([.batteryLevel, .heartRateMeasurement], name: "Band 7")
        #expect(try await unnamed.connect().model == "Band 7")
        let (described, _) = try Self.standardOnly(name: "Band 7")
        let info = try await described.connect()
        #expect(info.model != "Band 7")
        #expect(info.model == info.standard?.model)
    }

    @Test func aWatchWithoutProtocolV1IsDescribedByItsDeviceInformation() async throws {
        let (watch, _) = try Self.standardOnly()
        let info = try await watch.connect()
        #expect(info.services == ServiceSet([.deviceInformation, .battery, .currentTime, .heartRate]))
        #expect(info.model == "TS-Sim W10")
        #expect(info.firmware == "1.4.2")
        #expect(info.standard?.manufacturer == "tsgateway project")
        #expect(info.standard?.serialNumber == "SIM-0001")
        #expect(info.capabilities.alarms == nil && info.capabilities.monitorTypes.isEmpty && info.capabilities.sleepSync == nil)
        #expect(info.capabilities.battery && info.capabilities.clock && info.capabilities.heartRate, "what its standard services offer")
    }

    @Test func protocolV1RequestsAreRefusedAsNotSupportedWithoutWaiting() async throws {
        let (watch, _) = try Self.standardOnly()
        try await watch.connect()
        for request in [{ _ = try await watch.alarms() }, { try await watch.setLiveSleepEvents(true) },
                        { _ = try await watch.commitSleep(start: 0, end: 1, count: 0) }] as [@Sendable () async throws -> Void] {
            do {
                try await request()
                Issue.record("a protocol v1 request succeeded on a watch without protocol v1")
            } catch {
                #expect(ErrorCategory.of(error) == .notSupported, "\(error)")
            }
        }
        await #expect(throws: WatchError.self) { try await watch.alarms() }
        // In the words of the command the person typed, not the protocol's message name.
        do { _ = try await watch.alarms() } catch {
            #expect("\(error)".contains("alarms — it has no protocol v1 service") && !"\(error)".contains("alarmsGet"), "\(error)")
        }
        do { _ = try await watch.commitSleep(start: 0, end: 1, count: 0) } catch { #expect("\(error)".contains("sleep records — it has no protocol v1"), "\(error)") }
    }

    @Test func batteryComesFromBatteryLevelAndFollowsNotifications() async throws {
        let (watch, services) = try Self.standardOnly()
        try await watch.connect()
        #expect(try await watch.battery() == BatteryStatus(level: 82, state: .unknown))
        let changes = try await watch.batteryLevelChanges()
        await services.notify([101], on: .batteryLevel)  // out of range: skipped
        await services.setBatteryLevel(42)
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == 42)
    }

    @Test func timeSyncWritesCurrentTimeAndLocalTimeInformation() async throws {
        let (watch, services) = try Self.standardOnly()
        try await watch.connect()  // sets the clock on connect, as on a protocol v1 watch
        let written = try #require(await services.writtenTime)
        // 2025-11-03 08:00 UTC is 09:00 CET, a Monday.
        #expect([written.year, UInt16(written.month), UInt16(written.day), UInt16(written.hour), UInt16(written.minute)] == [2025, 11, 3, 9, 0])
        #expect(written.dayOfWeek == 1)
        #expect(await services.writtenLocalTime == LocalTimeInformationValue(timeZone: 4, dstOffset: 0))
        try await watch.syncTime()
    }

    @Test func aWatchMissingAServiceSaysSoForThatFeature() async throws {
        let (watch, _) = try Self.standardOnly([.batteryLevel, .heartRateMeasurement])
        let info = try await watch.connect()
        #expect(info.model == "unknown")
        #expect(info.standard == nil)
        for request in [{ try await watch.syncTime() }, { _ = try await watch.bodySensorLocation() }] as [@Sendable () async throws -> Void] {
            do {
                try await request()
                Issue.record("a missing characteristic was used")
            } catch {
                #expect(ErrorCategory.of(error) == .notSupported, "\(error)")
            }
        }
    }

    @Test func heartRateMeasurementsAreParsedAndMalformedOnesCounted() async throws {
        let (watch, services) = try Self.standardOnly()
        try await watch.connect()
        let refused = Refusals()
        let measurements = try await watch.heartRateMeasurements { refused.add($0) }
        await services.setStage(.deep)
        await services.beatOnce()
        await services.notify([0x11, 60], on: .heartRateMeasurement)  // RR flag, no interval
        await services.notify([0x01, 0x48], on: .heartRateMeasurement)  // 16-bit format, one byte
        await services.notify([0x16, 0x48, 0x00, 0x04], on: .heartRateMeasurement)
        var iterator = measurements.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.bpm == SimulatedStandardServices.heartRate(in: .deep, beat: 0))
        #expect(first.sensorContact == .detected)
        #expect(first.rrIntervals.count == 1)
        let second = try #require(await iterator.next())
        #expect(second == HeartRateMeasurement(bpm: 0x48, sensorContact: .detected, rrIntervals: [1024]))
        #expect(await watch.malformedHeartRateValues == 2)
        #expect(refused.all.map(\.characteristic) == [.heartRateMeasurement, .heartRateMeasurement])
    }

    @Test func aProtocolV1WatchWithStandardServicesOffersBoth() async throws {
        let services = SimulatedStandardServices(characteristics: [.manufacturerName, .modelNumber, .batteryLevel, .heartRateMeasurement])
        var configuration = WatchConfiguration()
        configuration.requestTimeout = .milliseconds(200)
        let watch = Watch(transport: LoopbackTransport(peripheral: SimulatedWatch(), mtu: try ATTMTU(247), standard: services), configuration: configuration)
        let info = try await watch.connect()
        #expect(info.services == ServiceSet([.protocolV1, .deviceInformation, .battery, .heartRate]))
        #expect(info.standard?.manufacturer == "tsgateway project")
        #expect(info.capabilities.maxAlarms > 0)
        _ = try await watch.alarms()
        // Protocol v1's battery (with the charging state) is preferred; the simulator's says 82 % too.
        _ = try await watch.battery()
    }

    @Test func aPlainLoopbackLinkIsProtocolV1Only() async throws {
        let rig = try Rig(days: 1)
        let info = try await rig.watch.connect()
        #expect(info.services == .protocolV1Only)
        #expect(info.standard == nil)
        do {
            _ = try await rig.watch.heartRateMeasurements()
            Issue.record("heart rate on a watch without the Heart Rate service")
        } catch {
            #expect(ErrorCategory.of(error) == .notSupported)
        }
    }
}

final class Refusals: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [StandardValueError] = []
    func add(_ error: StandardValueError) { lock.withLock { errors.append(error) } }
    var all: [StandardValueError] { lock.withLock { errors } }
}
