import Foundation
import Testing
import TSModels
import TSQRing

/// The vectors in protocol-spec/qring/vectors/, written by an independent implementation of
/// protocol-spec/qring/qring.md (scripts/qring/qring_codec.py, scripts/qring/qring_vectors.py).
enum QRingVectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol-spec/qring/vectors")

    struct Entry: CustomTestStringConvertible, @unchecked Sendable {
        var fields: [String: Any]
        var name: String { fields["name"] as? String ?? "?" }
        var testDescription: String { name }
        subscript(key: String) -> Any? { fields[key] }
        func string(_ key: String) -> String { fields[key] as? String ?? "" }
        func bytes(_ key: String) -> [UInt8] { hexBytes(string(key)) }
        func object(_ key: String) -> [String: Any] { fields[key] as? [String: Any] ?? [:] }
    }

    static func load(_ file: String) -> [Entry] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)),
              let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            Issue.record("cannot read protocol-spec/qring/vectors/\(file)")
            return []
        }
        return list.map { Entry(fields: $0) }
    }

    static let packets = load("packets.json")
    static let invalid = load("invalid.json")
    static let heartRateLogs = load("heart-rate-log.json")
    static let steps = load("steps.json")
    static let bigData = load("big-data.json")
    static let sleep = load("sleep.json")
}

func hexBytes(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
        out.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return out
}

func zone(_ entry: QRingVectors.Entry) throws -> TimeZone {
    try #require(TimeZone(identifier: entry.string("zone")), "zone \(entry.string("zone"))")
}

func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? -1 }
func bool(_ value: Any?) -> Bool? { (value as? NSNumber)?.boolValue }
func flag(_ value: Any?) throws -> Bool { try #require(bool(value) as Bool?) }

@Suite struct QRingVectorTests {
    @Test func everyVectorFileHasVectors() {
        #expect(QRingVectors.packets.count > 40)
        #expect(QRingVectors.invalid.count > 10)
        #expect(QRingVectors.heartRateLogs.count > 5)
        #expect(QRingVectors.steps.count > 3)
        #expect(QRingVectors.bigData.count > 8)
        #expect(QRingVectors.sleep.count > 15)
    }

    @Test(arguments: QRingVectors.packets.filter { $0.string("direction") == "request" })
    func requestBytes(_ v: QRingVectors.Entry) throws {
        let body = v.object("body")
        let monitor = SwitchedMonitor(rawValue: body["monitor"] as? String ?? "")
        let packet: QRingPacket
        switch v.string("kind") {
        case "setTime":
            let text = try #require(body["wall"] as? String)
            let date = try #require(RingDate(iso: String(text.prefix(10))))
            let clock = text.dropFirst(11).split(separator: ":").compactMap { Int($0) }
            packet = try QRingRequest.setTime(RingDateTime(date: date, secondOfDay: clock[0] * 3600 + clock[1] * 60 + clock[2]))
        case "battery": packet = QRingRequest.battery
        case "heartRateLogSettingsRead": packet = QRingRequest.heartRateLogSettingsRead
        case "heartRateLogSettingsWrite":
            let config = MonitorConfig(type: .heartRate, schedule: MonitorSchedule(
                enabled: try flag(body["enabled"]), startMinute: 0, endMinute: 1440, intervalMinutes: UInt16(int(body["interval"]))))
            packet = try QRingRequest.heartRateLogSettingsWrite(config)
        case "switchRead": packet = QRingRequest.switchRead(try #require(monitor))
        case "switchWrite": packet = QRingRequest.switchWrite(try #require(monitor), enabled: try flag(body["enabled"]))
        case "heartRateLog": packet = QRingRequest.heartRateLog(day: try #require(RingDate(iso: body["day"] as? String ?? "")))
        case "realTimeStart": packet = QRingRequest.realTimeStart
        case "realTimeContinue": packet = QRingRequest.realTimeContinue
        case "realTimeStop": packet = QRingRequest.realTimeStop
        case "steps": packet = QRingRequest.steps(daysAgo: UInt8(int(body["daysAgo"])))
        case let kind:
            Issue.record("request kind \(kind) has no Swift builder")
            return
        }
        #expect(packet.bytes == v.bytes("packet"))
    }

    @Test(arguments: QRingVectors.packets.filter { $0.string("direction") == "answer" })
    func answerDecodes(_ v: QRingVectors.Entry) throws {
        let body = v.object("body")
        let expected: QRingAnswer
        func battery() -> RingBattery { RingBattery(level: int(body["level"]), charging: bool(body["charging"]) ?? false) }
        let monitor = SwitchedMonitor(rawValue: body["monitor"] as? String ?? "")
        switch v.string("kind") {
        case "timeSet": expected = .timeSet(newSleepProtocol: try flag(body["newSleepProtocol"]))
        case "battery": expected = .battery(battery())
        case "batteryPushed": expected = .batteryPushed(battery())
        case "newData": expected = .newData(try #require(RingDataKind(rawValue: body["kind"] as? String ?? "")))
        case "notice": expected = .notice(code: UInt8(int(body["code"])))
        case "heartRateLogSettings":
            expected = .heartRateLogSettings(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(
                enabled: try flag(body["enabled"]), startMinute: 0, endMinute: 1440, intervalMinutes: UInt16(int(body["interval"])))))
        case "heartRateLogSettingsWritten": expected = .heartRateLogSettingsWritten
        case "switch": expected = .monitorSwitch(try #require(monitor), enabled: try flag(body["enabled"]))
        case "switchWritten": expected = .monitorSwitchWritten(try #require(monitor))
        case "realTimeHeartRate": expected = .realTimeHeartRate(bpm: int(body["bpm"]))
        case "realTimeError": expected = .realTimeError(code: UInt8(int(body["code"])))
        case "realTimeOther": expected = .realTimeOther(type: UInt8(int(body["type"])))
        case "realTimeStopped": expected = .realTimeStopped
        case let kind:
            Issue.record("answer kind \(kind) has no Swift case")
            return
        }
        #expect(try QRingAnswer(packet: v.bytes("packet")) == expected)
    }

    @Test(arguments: QRingVectors.invalid)
    func invalidPacketIsRejected(_ v: QRingVectors.Entry) {
        do {
            _ = try QRingAnswer(packet: v.bytes("input"))
            Issue.record("accepted; expected \(v.string("error"))")
        } catch {
            #expect(error.code.rawValue == v.string("error"))
        }
    }

    @Test(arguments: QRingVectors.heartRateLogs)
    func heartRateLog(_ v: QRingVectors.Entry) throws {
        let day = try #require(RingDate(iso: v.string("day")))
        var assembler = HeartRateLogAssembler(day: day, zone: try zone(v))
        let packets = (v["packets"] as? [String] ?? []).map(hexBytes)
        let result = v.object("result")
        var outcome: HeartRateLog?
        for (index, packet) in packets.enumerated() {
            do {
                outcome = try assembler.feed(packet)
            } catch {
                #expect(error.code.rawValue == result["error"] as? String)
                #expect(index == int(result["atPacket"]))
                return
            }
            if outcome != nil { #expect(index == packets.count - 1) }
        }
        #expect(result["error"] == nil, "expected \(result["error"] ?? "")")
        #expect(assembler.passedOver?.description == result["passedOver"] as? String, "the day of a whole answer passed over")
        if bool(result["incomplete"]) == true {
            #expect(outcome == nil)
        } else if bool(result["noData"]) == true {
            #expect(outcome == .noData)
        } else {
            let samples = (result["samples"] as? [[String: Any]] ?? []).map {
                HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(int($0["time"]))), bpm: int($0["bpm"]))
            }
            #expect(outcome == .samples(samples, slotMinutesReported: int(result["slotMinutes"])))
        }
    }

    @Test(arguments: QRingVectors.steps)
    func steps(_ v: QRingVectors.Entry) throws {
        var assembler = StepsAssembler(zone: try zone(v))
        let packets = (v["packets"] as? [String] ?? []).map(hexBytes)
        let result = v.object("result")
        var outcome: [RingStepsInterval]?
        for (index, packet) in packets.enumerated() {
            do {
                outcome = try assembler.feed(packet)
            } catch {
                #expect(error.code.rawValue == result["error"] as? String)
                #expect(index == int(result["atPacket"]))
                return
            }
        }
        #expect(result["error"] == nil, "expected \(result["error"] ?? "")")
        let intervals = try #require(outcome)
        let expected = result["intervals"] as? [[String: Any]] ?? []
        #expect(intervals.count == expected.count)
        for (got, want) in zip(intervals, expected) {
            #expect(got.start == Int64(int(want["start"])))
            #expect(got.steps == int(want["steps"]))
            #expect(got.calories == int(want["calories"]))
            #expect(got.distanceMeters == int(want["distance"]))
            let wall = want["wall"] as? String ?? ""
            #expect(got.wall.date.description == String(wall.prefix(10)))
            #expect(got.wall.hour * 60 + got.wall.minute == (Int(wall.dropFirst(11).prefix(2)) ?? -1) * 60 + (Int(wall.dropFirst(14).prefix(2)) ?? -1))
        }
    }

    @Test(arguments: QRingVectors.bigData)
    func bigDataStream(_ v: QRingVectors.Entry) {
        var reassembler = BigDataReassembler()
        var frames: [BigDataFrame] = []
        for chunk in v["chunks"] as? [String] ?? [] {
            frames += reassembler.feed(hexBytes(chunk))
        }
        if bool(v["expire"]) == true { reassembler.expire() }
        let expected = (v["frames"] as? [[String: Any]] ?? []).map {
            BigDataFrame(type: UInt8(int($0["type"])), payload: hexBytes($0["payload"] as? String ?? ""))
        }
        #expect(frames == expected)
        #expect(reassembler.garbageBytes == int(v["garbage"]))
        #expect(reassembler.oversized == int(v["oversized"]))
        #expect(reassembler.crcMismatches == int(v["crcMismatches"]))
        #expect(reassembler.incomplete == int(v["incomplete"]))
        if bool(v["expire"]) == true { #expect(!reassembler.hasPartialFrame) }
    }

    @Test(arguments: QRingVectors.sleep)
    func sleepDays(_ v: QRingVectors.Entry) throws {
        let payload = v.bytes("payload")
        #expect(BigDataFrame(type: BigDataFrame.sleepType, payload: payload).bytes == v.bytes("frame"))
        let today = try #require(RingDate(iso: v.string("today")))
        let timeZone = try zone(v)
        let days: [RingSleepDay]
        do {
            days = try RingSleep.days(payload: payload, today: today, zone: timeZone)
        } catch {
            #expect(error.code.rawValue == v.string("error"))
            return
        }
        #expect(v["error"] == nil, "expected \(v.string("error"))")
        let expected = v["days"] as? [[String: Any]] ?? []
        #expect(days.count == expected.count)
        for (got, want) in zip(days, expected) {
            #expect(got.daysAgo == int(want["daysAgo"]))
            #expect(got.date.description == want["date"] as? String)
            #expect(got.start == Int64(int(want["start"])))
            #expect(got.end == Int64(int(want["end"])))
            #expect(got.droppedPairs == int(want["droppedPairs"]))
            let items = (want["items"] as? [[String: Any]] ?? []).map {
                SleepItem(stage: SleepStage(name: $0["stage"] as? String ?? "") ?? .awake,
                          start: Int64(int($0["start"])), duration: Int64(int($0["duration"])))
            }
            #expect(got.items == items)
        }
    }
}
