import TSQRingPeripheral
import TSTestSupport
import Foundation
import Testing
import TSBlueZ
import TSGATT
import TSModels
import TSProtocol
import TSQRing
import TSQRingSimulator
import TSSimulatorPeripheral
@testable import TSDBus

/// `QRingSimulatorPeripheral` as bluetoothd sees it (`FakePeripheralManager`): the ring's two
/// pairs and Device Information, advertised under the ring's name, answering a central.
@Suite struct QRingSimulatorPeripheralTests {
    static let history = RingHistory(seed: 11, timeZone: TimeZone(identifier: "Europe/Berlin")!,
                                     now: Date(timeIntervalSince1970: 1_763_535_600), days: 7)   // 2025-11-19 07:00 UTC

    @Test(.timeLimit(.minutes(1))) func theRingServesBothPairsAndDeviceInformationAndCutsSleepToTheReportedMTU() async throws {
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let bluez = BlueZ(bus: try BusConnection(.address(fake.bus.address))); defer { bluez.bus.close() }
        let ring = SimulatedRing(history: Self.history)
        let peripheral = QRingSimulatorPeripheral(bluez: bluez, ring: ring, adapter: try await bluez.adapter("hci1"))
        let reports = Reports()
        peripheral.report = { reports.add($0) }
        try await peripheral.start()

        let objects = try #require(fake.application?.objects)
        let found = SimulatorPeripheralTests.characteristics(in: objects)
        let expected: [String: ([String], String)] = [
            QRingGATT.commandWrite: (["write", "write-without-response"], QRingGATT.commandService),
            QRingGATT.commandNotify: (["notify"], QRingGATT.commandService),
            QRingGATT.bigDataWrite: (["write", "write-without-response"], QRingGATT.bigDataService),
            QRingGATT.bigDataNotify: (["notify"], QRingGATT.bigDataService),
            bluetoothBaseUUID(0x2A27): (["read"], bluetoothBaseUUID(0x180A)),
            bluetoothBaseUUID(0x2A26): (["read"], bluetoothBaseUUID(0x180A)),
        ]
        #expect(Set(found.keys) == Set(expected.keys))
        for (uuid, (flags, service)) in expected {
            #expect(found[uuid]?.flags == flags, "flags of \(uuid)")
            #expect(found[uuid]?.service == service, "service of \(uuid)")
        }
        let advertisement = try #require(fake.advertisement)
        #expect(advertisement["ServiceUUIDs"]?.stringArrayValue == [QRingGATT.commandService])
        #expect(advertisement["LocalName"]?.stringValue == "R02_5A1C")

        let sender = try #require(fake.application?.sender)
        func path(_ uuid: String) throws -> String { try #require(found[uuid]?.path) }
        func call(_ uuid: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await fake.server.call(destination: sender, path: try path(uuid), interface: BlueZInterface.gattCharacteristic, member: member, arguments)
        }
        #expect(try await call(bluetoothBaseUUID(0x2A27), "ReadValue", [.properties([:])]).first?.byteArrayValue == Array("R02_V3.0".utf8))
        #expect(try await call(bluetoothBaseUUID(0x2A26), "ReadValue", [.properties([:])]).first?.byteArrayValue == Array("R02_3.00.06_240523".utf8))

        // A battery request on the command pair: a 16-byte answer on its notify characteristic.
        let answers = try await fake.server.signals(SignalMatch(path: try path(QRingGATT.commandNotify), interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let bigData = try await fake.server.signals(SignalMatch(path: try path(QRingGATT.bigDataNotify), interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await call(QRingGATT.commandNotify, "StartNotify")
        _ = try await call(QRingGATT.bigDataNotify, "StartNotify")
        _ = try await call(QRingGATT.commandWrite, "WriteValue", [.bytes(QRingPacket(command: QRingCommand.battery).bytes), .properties(["type": .string("command")])])
        var answerIterator = answers.makeAsyncIterator()
        let battery = try QRingPacket(bytes: try #require(await answerIterator.next()?.arguments[1].propertiesValue?["Value"]?.byteArrayValue))
        #expect(battery.command == QRingCommand.battery && Array(battery.data.prefix(2)) == [64, 0])

        // The sleep request on the big-data pair, with BlueZ reporting ATT MTU 30: the reply comes
        // in chunks of MTU − 5 = 25 bytes and is the ring's sleep payload.
        _ = try await call(QRingGATT.bigDataWrite, "WriteValue", [.bytes(BigDataFrame.sleepRequest.bytes), .properties(["type": .string("command"), "mtu": .uint16(30)])])
        var reassembler = BigDataReassembler()
        var chunks: [[UInt8]] = []
        var frames: [BigDataFrame] = []
        for await signal in bigData {
            guard let chunk = signal.arguments[1].propertiesValue?["Value"]?.byteArrayValue else { continue }
            chunks.append(chunk)
            frames += reassembler.feed(chunk)
            if !frames.isEmpty { break }
        }
        #expect(chunks.count > 1 && chunks.allSatisfy { $0.count <= 25 } && chunks.contains { $0.count == 25 }, "\(chunks.map(\.count))")
        #expect(frames.map(\.type) == [BigDataFrame.sleepType])
        #expect(frames.first?.payload == (await ring.sleepPayload()))
        #expect(Int(frames.first?.payload.first ?? 0) == Self.history.nights.count)
        #expect(reports.lines.contains("the central's writes report ATT MTU 30"))
        await peripheral.stop()
    }

    /// The ring's clock stopped `secondsIntoToday` after midnight of today in Berlin, and that zone.
    static func berlinRingClock(secondsIntoToday: TimeInterval) -> (zone: TimeZone, now: Date) {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return (zone, calendar.startOfDay(for: Date()).addingTimeInterval(secondsIntoToday))
    }

    /// `simulate --dialect qring` holds the ring `--simulate --dialect qring` holds (same seed,
    /// days and clock): the nights its ground truth lists are the ones an in-process sync stores,
    /// and its heart-rate truth is the ring's five-minute log.
    @Test func theSimulateCommandsRingIsTheInProcessRing() async throws {
        _ = try CLI.requireBinary()
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let cli = try CLI(); defer { cli.cleanUp() }
        // The central reads the ring's days against the real date: the ring's clock stops 30 s
        // into today (Berlin), the same for both runs.
        let (zone, ringNow) = Self.berlinRingClock(secondsIntoToday: 30)
        let clock = ["TSGATEWAY_SIMULATOR_NOW": ISO8601DateFormatter().string(from: ringNow)]
        let truthPath = cli.home.appendingPathComponent("truth.json").path, heartRatePath = cli.home.appendingPathComponent("hr.json").path
        let simulated = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "qring", "--duration", "1",
                                                   "--ground-truth", truthPath, "--heart-rate-truth", heartRatePath,
                                                   "--ring-fault", "wrong-crc", "--ring-fault", "drop-log-packet:3"],
                                                  environment: clock.merging(["TSGATEWAY_DBUS_ADDRESS": fake.bus.address]) { $1 })
        #expect(simulated.status == 0, "\(simulated.stderr)")
        #expect(simulated.stdout.contains("simulated ring R02_5A1C advertising on hci1 (00:AA:BB:CC:DD:01), service \(QRingGATT.commandService), dialect qring"), "\(simulated.stdout)")
        #expect(simulated.stdout.contains("2 faults queued"), "\(simulated.stdout)")
        #expect(simulated.stdout.hasSuffix("stopped\n"))
        #expect(fake.advertisement?["LocalName"]?.stringValue == "R02_5A1C")

        let synced = try await cli.runDetached(["sleep", "sync", "--since", "7d", "--json", "--simulate", "--dialect", "qring"], environment: clock)
        #expect(synced.status == 0, "\(synced.stderr)")
        struct Range: Decodable { var from: Date; var to: Date? }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let range = try decoder.decode(Range.self, from: Data(synced.stdout.utf8))
        let exported = try await cli.runDetached(["sleep", "export", "--format", "json", "--last", "9d"], environment: clock)
        #expect(exported.status == 0, "\(exported.stderr)")
        struct Record: Decodable, Hashable { var start: Int64; var stage: String; var duration: Int64 }
        struct Export: Decodable { var records: [Record] }
        let stored = Set(try JSONDecoder().decode(Export.self, from: Data(exported.stdout.utf8)).records)
        let truth = try JSONDecoder().decode([Record].self, from: Data(contentsOf: URL(fileURLWithPath: truthPath)))
        let from = Int64(range.from.timeIntervalSince1970), until = range.to.map { Int64($0.timeIntervalSince1970) } ?? .max
        let inRange = Set(truth.filter { (from..<until).contains($0.start) })
        #expect(!inRange.isEmpty && stored == inRange, "stored \(stored.count), ground truth \(inRange.count)")

        struct Reading: Decodable { var time: Int64; var bpm: Int }
        let readings = try JSONDecoder().decode([Reading].self, from: Data(contentsOf: URL(fileURLWithPath: heartRatePath)))
        let history = RingHistory(seed: 20_251_119, timeZone: zone, now: ringNow, days: 90)
        let day = RingDateTime(ringNow, in: zone).date.adding(days: -1)
        let logged = history.heartRateSamples(day: day, intervalMinutes: 5, enabled: true)
        #expect(logged.count == 288)
        let written = Dictionary(uniqueKeysWithValues: readings.map { ($0.time, $0.bpm) })
        #expect(logged.allSatisfy { written[Int64($0.time.timeIntervalSince1970)] == $0.bpm })
    }

    /// `--steps-truth` writes the quarter-hours of the ring's today up to its clock: what its
    /// steps answer for today carries (the e2e suite holds colmi-r02-client's reading to it).
    @Test func theSimulateCommandWritesTodaysSteps() async throws {
        _ = try CLI.requireBinary()
        let fake = try await FakePeripheralManager(); defer { fake.stop() }
        let cli = try CLI(); defer { cli.cleanUp() }
        // 13:05 on the ring's clock: the quarters from 07:00 to 13:00 may have steps, later ones not yet.
        let (zone, ringNow) = Self.berlinRingClock(secondsIntoToday: 13 * 3600 + 300)
        let stepsPath = cli.home.appendingPathComponent("steps.json").path
        let simulated = try await cli.runDetached(["simulate", "--adapter", "hci1", "--dialect", "qring", "--duration", "1", "--seed", "11", "--days", "14",
                                                   "--steps-truth", stepsPath],
                                                  environment: ["TSGATEWAY_SIMULATOR_NOW": ISO8601DateFormatter().string(from: ringNow),
                                                                "TSGATEWAY_DBUS_ADDRESS": fake.bus.address])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        struct Quarter: Decodable, Equatable { var quarter, steps, calories, distanceMeters: Int }
        struct Truth: Decodable { var day: String; var quarters: [Quarter] }
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: stepsPath)))
        let history = RingHistory(seed: 11, timeZone: zone, now: ringNow, days: 14)
        let today = RingDateTime(ringNow, in: zone).date
        let quarters = history.steps(day: today)
        #expect(truth.day == today.description)
        #expect(!quarters.isEmpty && quarters.allSatisfy { (28...52).contains($0.quarter) })
        #expect(truth.quarters == quarters.map { Quarter(quarter: $0.quarter, steps: $0.steps, calories: $0.calories, distanceMeters: $0.distanceMeters) })
    }
}
