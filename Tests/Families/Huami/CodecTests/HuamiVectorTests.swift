import Foundation
import Testing
import TSModels
import TSHuami

/// The vectors in protocol-spec/huami/vectors/, written by an independent implementation of
/// protocol-spec/huami/huami.md (scripts/huami/huami_codec.py, scripts/huami/huami_vectors.py).
enum HuamiVectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol-spec/huami/vectors")

    struct Entry: CustomTestStringConvertible, @unchecked Sendable {
        var fields: [String: Any]
        var name: String { fields["name"] as? String ?? "?" }
        var testDescription: String { name }
        subscript(key: String) -> Any? { fields[key] }
        func string(_ key: String) -> String { fields[key] as? String ?? "" }
        func bytes(_ key: String) -> [UInt8] { hexBytes(string(key)) }
        func object(_ key: String) -> [String: Any] { fields[key] as? [String: Any] ?? [:] }
        func int(_ key: String) -> Int { (fields[key] as? NSNumber)?.intValue ?? -1 }
    }

    static func json(_ file: String) -> Any? {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)),
              let value = try? JSONSerialization.jsonObject(with: data) else {
            Issue.record("cannot read protocol-spec/huami/vectors/\(file)")
            return nil
        }
        return value
    }

    static func load(_ file: String) -> [Entry] {
        (json(file) as? [[String: Any]] ?? []).map { Entry(fields: $0) }
    }

    static let messages = load("messages.json")
    static let invalid = load("invalid.json")
    static let time = load("time.json")
    static let fetch = load("fetch.json")
    static let sleep = load("sleep.json")
    static let alarmTables = load("alarm-table.json")
    static let challenges = ((json("auth.json") as? [String: Any])?["challenges"] as? [[String: Any]] ?? []).map { Entry(fields: $0) }
    static let keyTexts = ((json("auth.json") as? [String: Any])?["keyTexts"] as? [[String: Any]] ?? []).map { Entry(fields: $0) }
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

func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? -1 }
func u8(_ value: Any?) -> UInt8 { UInt8(truncatingIfNeeded: int(value)) }
func flag(_ value: Any?) -> Bool { (value as? NSNumber)?.boolValue ?? false }
func object(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }

func huamiTime(_ f: [String: Any]) -> HuamiTime {
    var time = HuamiTime(year: int(f["year"]), month: int(f["month"]), day: int(f["day"]), hour: int(f["hour"]), minute: int(f["minute"]),
                         second: int(f["second"]), fraction: f["fraction"] == nil ? 0 : int(f["fraction"]), zoneQuarterHours: int(f["zone"]))
    if f["weekday"] != nil { time.weekday = int(f["weekday"]) }
    return time
}

func huamiAlarm(_ b: [String: Any]) -> HuamiAlarm {
    HuamiAlarm(slot: u8(b["slot"]), isEnabled: flag(b["enabled"]), snoozeAllowed: flag(b["snooze"]), hour: u8(b["hour"]), minute: u8(b["minute"]),
               repeatDays: AlarmRepeat(rawValue: u8(b["days"])))
}

func chunk(_ b: [String: Any]) -> HuamiConfigChunk {
    let position: HuamiConfigChunk.Position = switch b["position"] as? String {
    case "first": .first
    case "middle": .middle
    case "last": .last
    default: .complete
    }
    return HuamiConfigChunk(position: position, type: b["type"].map(u8), payload: hexBytes(b["payload"] as? String ?? ""))
}

/// A message of the vectors: what the Swift codec builds from the body, and what it reads from the bytes.
enum Message: Equatable {
    case authRequest(HuamiAuthRequest), authAnswer(HuamiAuthAnswer), time(HuamiTime)
    case configRequest(HuamiConfigRequest), configAnswer(HuamiConfigAnswer), heartRate(HuamiHeartRateCommand)
    case battery(HuamiBattery), fetchRequest(HuamiFetchRequest), fetchAnswer(HuamiFetchAnswer), packet(HuamiDataPacket)

    static func decode(_ characteristic: String, _ direction: String, _ raw: [UInt8]) throws(HuamiError) -> Message {
        switch (characteristic, direction) {
        case ("auth", "toBand"): .authRequest(try HuamiAuthRequest(bytes: raw))
        case ("auth", _): .authAnswer(try HuamiAuthAnswer(bytes: raw))
        case ("currentTime", _): .time(try HuamiTime(currentTimeBytes: raw))
        case ("configuration", "toBand"): .configRequest(try HuamiConfigRequest(bytes: raw))
        case ("configuration", _): .configAnswer(try HuamiConfigAnswer(bytes: raw))
        case ("heartRateControl", _): .heartRate(try HuamiHeartRateCommand(bytes: raw))
        case ("battery", _): .battery(try HuamiBattery(bytes: raw))
        case ("fetchControl", "toBand"): .fetchRequest(try HuamiFetchRequest(bytes: raw))
        case ("fetchControl", _): .fetchAnswer(try HuamiFetchAnswer(bytes: raw))
        default: .packet(try HuamiDataPacket(bytes: raw))
        }
    }

    static func expected(_ v: HuamiVectors.Entry) throws -> Message {
        let b = v.object("body")
        let flags = HuamiAuthFlags(authFlags: u8(b["authFlags"]), cryptFlags: u8(b["cryptFlags"] ?? 0))
        switch (v.string("characteristic"), v.string("direction"), v.string("kind")) {
        case ("auth", "toBand", "sendKey"): return .authRequest(.sendKey(authFlags: flags.authFlags, key: try HuamiAuthKey(bytes: hexBytes(b["key"] as? String ?? ""))))
        case ("auth", "toBand", "requestRandom"): return .authRequest(.requestRandom(flags))
        case ("auth", "toBand", "sendEncrypted"): return .authRequest(.sendEncrypted(flags, encrypted: hexBytes(b["encrypted"] as? String ?? "")))
        case ("auth", _, "keyStored"): return .authAnswer(.keyStored)
        case ("auth", _, "random"): return .authAnswer(.random(hexBytes(b["random"] as? String ?? "")))
        case ("auth", _, "accepted"): return .authAnswer(.accepted)
        case ("auth", _, "refused"): return .authAnswer(.refused(opcode: u8(b["opcode"]), status: u8(b["status"])))
        case ("currentTime", _, _): return .time(huamiTime(b))
        case ("configuration", "toBand", "setAlarm"): return .configRequest(.setAlarm(huamiAlarm(b)))
        case ("configuration", "toBand", "clearAlarm"): return .configRequest(.clearAlarm(slot: u8(b["slot"])))
        case ("configuration", "toBand", "alarmStatus"): return .configRequest(.alarmStatus)
        case ("configuration", "toBand", "alarmTable"): return .configRequest(.alarmTable)
        case ("configuration", _, "alarmSet"): return .configAnswer(.alarmSet(status: u8(b["status"])))
        case ("configuration", _, "alarmStatus"):
            let slots = (b["slots"] as? [[String: Any]] ?? []).map { HuamiAlarmStatus(slot: u8($0["slot"]), isEnabled: flag($0["enabled"])) }
            return .configAnswer(.alarmStatus(slots))
        case ("configuration", _, "chunk"): return .configAnswer(.chunk(chunk(b)))
        case ("configuration", _, "other"):
            return .configAnswer(.other(opcode: u8(b["opcode"]), status: u8(b["status"]), rest: hexBytes(b["rest"] as? String ?? "")))
        case ("heartRateControl", _, "interval"): return .heartRate(.interval(minutes: u8(b["minutes"])))
        case ("heartRateControl", _, "sleepMonitoring"): return .heartRate(.sleepMonitoring(flag(b["on"])))
        case ("heartRateControl", _, "manualMeasurement"): return .heartRate(.manualMeasurement(flag(b["on"])))
        case ("battery", _, _): return .battery(HuamiBattery(level: u8(b["level"]), state: u8(b["state"])))
        case ("fetchControl", "toBand", "start"): return .fetchRequest(.start(type: u8(b["type"]), since: huamiTime(object(b["since"]))))
        case ("fetchControl", "toBand", "fetchData"): return .fetchRequest(.fetchData)
        case ("fetchControl", "toBand", "acknowledge"): return .fetchRequest(.acknowledge)
        case ("fetchControl", _, "started"): return .fetchAnswer(.started(count: UInt32(int(b["count"])), start: huamiTime(object(b["start"]))))
        case ("fetchControl", _, "finished"): return .fetchAnswer(.finished(crc32: b["crc32"].map { UInt32(int($0)) }))
        case ("fetchControl", _, "acknowledged"): return .fetchAnswer(.acknowledged)
        case ("fetchControl", _, "refused"): return .fetchAnswer(.refused(opcode: u8(b["opcode"]), status: u8(b["status"])))
        case ("activityData", _, _): return .packet(HuamiDataPacket(counter: u8(b["counter"]), data: hexBytes(b["data"] as? String ?? "")))
        case let other:
            Issue.record("no Swift value for \(other)")
            return .packet(HuamiDataPacket(counter: 0, data: []))
        }
    }

    func bytes(cryptFlags: UInt8) -> [UInt8] {
        switch self {
        case let .authRequest(m): m.bytes
        case let .authAnswer(m): m.bytes(cryptFlags: cryptFlags)
        case let .time(m): m.currentTimeBytes
        case let .configRequest(m): m.bytes
        case let .configAnswer(m): m.bytes
        case let .heartRate(m): m.bytes
        case let .battery(m): m.bytes
        case let .fetchRequest(m): m.bytes
        case let .fetchAnswer(m): m.bytes
        case let .packet(m): m.bytes
        }
    }
}

@Suite struct HuamiVectorTests {
    @Test func everyVectorFileHasVectors() {
        #expect(HuamiVectors.messages.count > 50)
        #expect(HuamiVectors.invalid.count > 50)
        #expect(HuamiVectors.time.count > 5)
        #expect(HuamiVectors.fetch.count > 15)
        #expect(HuamiVectors.sleep.count > 5)
        #expect(HuamiVectors.alarmTables.count > 5)
        #expect(HuamiVectors.challenges.count >= 4)
        #expect(HuamiVectors.keyTexts.count >= 5)
    }

    @Test(arguments: HuamiVectors.messages)
    func messageReadsAsItsBody(_ v: HuamiVectors.Entry) throws {
        let expected = try Message.expected(v)
        #expect(try Message.decode(v.string("characteristic"), v.string("direction"), v.bytes("bytes")) == expected)
        if !flag(v["decodeOnly"]) {
            #expect(hexString(expected.bytes(cryptFlags: u8(v.object("body")["cryptFlags"] ?? 0))) == v.string("bytes"))
        }
    }

    @Test(arguments: HuamiVectors.invalid)
    func invalidInputIsRejectedWithItsCode(_ v: HuamiVectors.Entry) {
        do {
            let message = try Message.decode(v.string("characteristic"), v.string("direction"), v.bytes("input"))
            Issue.record("accepted as \(message)")
        } catch {
            #expect(error.code.rawValue == v.string("error"))
        }
    }

    @Test(arguments: HuamiVectors.challenges)
    func challengeIsEncryptedWithTheKey(_ v: HuamiVectors.Entry) throws {
        let key = try HuamiAuthKey(bytes: v.bytes("key"))
        #expect(try key.encrypt(challenge: v.bytes("challenge")) == v.bytes("encrypted"))
        let flags = HuamiAuthFlags(authFlags: u8(v["authFlags"]), cryptFlags: u8(v["cryptFlags"]))
        #expect(try key.answer(challenge: v.bytes("challenge"), flags: flags).bytes == v.bytes("request"))
        #expect(key.accepts(encrypted: v.bytes("encrypted"), challenge: v.bytes("challenge")))
    }

    @Test(arguments: HuamiVectors.keyTexts)
    func keyTextParses(_ v: HuamiVectors.Entry) {
        do {
            let key = try HuamiAuthKey(hex: v.string("text"))
            #expect(v["error"] == nil)
            #expect(key.bytes == v.bytes("key"))
        } catch {
            #expect(error.code.rawValue == v.string("error"))
        }
    }

    @Test(arguments: HuamiVectors.time)
    func timeInAZone(_ v: HuamiVectors.Entry) throws {
        let zone = try #require(TimeZone(identifier: v.string("zone")))
        let time = HuamiTime(unixSeconds: Int64(v.int("unix")), zone: zone)
        #expect(time == huamiTime(v.object("fields")))
        #expect(time.currentTimeBytes == v.bytes("currentTime"))
        #expect(time.shortBytes == v.bytes("short"))
        #expect(try HuamiTime(currentTimeBytes: v.bytes("currentTime")).unixSeconds == Int64(v.int("unix")))
        #expect(try HuamiTime(shortBytes: v.bytes("short")).unixSeconds == Int64(v.int("unix")))
    }

    @Test(arguments: HuamiVectors.fetch)
    func fetchTransfer(_ v: HuamiVectors.Entry) throws {
        let format = try #require(HuamiSampleFormat(rawValue: v.int("sampleSize")))
        let result = v.object("result")
        var assembler: HuamiFetchAssembler
        do {
            assembler = try HuamiFetchAssembler(count: UInt32(v.int("count")), format: format, reorderWindow: v.int("window"))
        } catch {
            #expect(result["at"] as? String == "start")
            #expect(error.code.rawValue == result["error"] as? String)
            return
        }
        for (index, notification) in (v["notifications"] as? [String] ?? []).enumerated() {
            do {
                try assembler.feed(hexBytes(notification))
            } catch {
                #expect(int(result["at"]) == index, "failed at \(index): \(error)")
                #expect(error.code.rawValue == result["error"] as? String)
                return
            }
        }
        let data: [UInt8]
        do throws(HuamiError) {
            if let finished = v["finished"] as? String {
                guard case let .finished(crc) = try HuamiFetchAnswer(bytes: hexBytes(finished)) else {
                    Issue.record("the end is no fetch end")
                    return
                }
                data = try assembler.finish(crc32: crc, verifyCRC: flag(v["verifyCRC"]))
            } else {
                guard assembler.isComplete else { throw assembler.abandoned() }
                data = assembler.data
            }
        } catch {
            #expect(["finish", "timeout"].contains(result["at"] as? String ?? ""))
            #expect(error.code.rawValue == result["error"] as? String)
            return
        }
        #expect(result["error"] == nil)
        #expect(hexString(data) == result["data"] as? String)
    }

    @Test(arguments: HuamiVectors.sleep)
    func sleepAndHeartRateFromSamples(_ v: HuamiVectors.Entry) throws {
        let format = try #require(HuamiSampleFormat(rawValue: v.int("sampleSize")))
        var reader = HuamiSleepReader(maxAwakeMinutes: v.int("maxAwakeMinutes"))
        let fetches = v["fetches"] as? [[String: Any]] ?? []
        let items = v["items"] as? [[[String: Any]]] ?? []
        let rates = v["heartRates"] as? [[[String: Any]]] ?? []
        try #require(fetches.count == items.count && fetches.count == rates.count)
        for (index, fetch) in fetches.enumerated() {
            let samples = try HuamiSample.decode(hexBytes(fetch["data"] as? String ?? ""), format: format)
            #expect(HuamiSample.encode(samples, format: format) == hexBytes(fetch["data"] as? String ?? ""))
            let activity = HuamiActivity(start: Int64(int(fetch["start"])), format: format, samples: samples)
            let expected = items[index].map { SleepItem(stage: SleepStage(name: $0["stage"] as? String ?? "") ?? .awake, start: Int64(int($0["start"])), duration: Int64(int($0["duration"]))) }
            #expect(reader.read(activity) == expected, "fetch \(index)")
            let expectedRates = rates[index].map { HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(int($0["time"]))), bpm: int($0["bpm"])) }
            #expect(activity.heartRates == expectedRates, "fetch \(index)")
        }
        let state = v.object("state")
        #expect(reader.state.carriedKind == (state["carriedKind"] as? NSNumber).map { UInt8($0.intValue) })
        #expect(reader.state.end == (state["end"] as? NSNumber).map { Int64($0.intValue) })
        #expect(reader.state.nightOpen == flag(state["nightOpen"]))
        #expect(reader.state.pendingAwakeStart == (state["pendingAwakeStart"] as? NSNumber).map { Int64($0.intValue) })
        #expect(reader.state.pendingAwakeMinutes == int(state["pendingAwakeMinutes"]))
    }

    @Test(arguments: HuamiVectors.alarmTables)
    func alarmTableFromChunks(_ v: HuamiVectors.Entry) {
        let result = v.object("result")
        var assembler = HuamiConfigChunkAssembler()
        for (index, raw) in (v["chunks"] as? [String] ?? []).enumerated() {
            do {
                guard case let .chunk(chunk) = try HuamiConfigAnswer(bytes: hexBytes(raw)) else {
                    Issue.record("chunk \(index) is no chunk")
                    return
                }
                let whole: (type: UInt8, payload: [UInt8])? = try assembler.feed(chunk)
                guard let (type, payload) = whole else { continue }
                if result["error"] == nil {
                    #expect(Int(type) == int(result["type"]))
                    #expect(hexString(payload) == result["payload"] as? String)
                }
                if type == HuamiAlarmTable.chunkType {
                    let expected = (result["alarms"] as? [[String: Any]] ?? []).map(huamiAlarm)
                    #expect(try HuamiAlarmTable.alarms(payload: payload) == expected)
                }
                #expect(result["error"] == nil)
                return
            } catch {
                #expect(int(result["at"]) == index)
                #expect(error.code.rawValue == result["error"] as? String)
                return
            }
        }
        #expect(flag(result["incomplete"]), "no whole answer came")
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
