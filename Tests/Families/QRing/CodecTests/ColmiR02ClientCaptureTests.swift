import Foundation
import Testing
import TSModels
import TSQRing

/// Bytes real rings sent, which nobody in this project made: copied with attribution from
/// colmi_r02_client (MIT) into protocol-spec/qring/captures/colmi-r02-client/ (its README.md
/// names the source, commit, licence and ring), each with the reading that client gives them —
/// what its own tests assert, or what its parser reads where a test does not list the values.
/// That client sets the ring's clock in UTC, so the ring's wall-clock times are read in UTC here.
enum ColmiR02ClientCaptures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol-spec/qring/captures/colmi-r02-client")

    struct Entry: CustomTestStringConvertible, @unchecked Sendable {
        var fields: [String: Any]
        var testDescription: String { fields["name"] as? String ?? fields["packet"] as? String ?? "?" }
        var reference: [String: Any] { fields["reference"] as? [String: Any] ?? [:] }
        var packet: [UInt8] { colmiHex(fields["packet"] as? String ?? "") }

        /// The packets in the order the ring sent them: from the recorded file, whose records are
        /// a notification's 16 bytes and a newline, or from the list.
        func packets() throws -> [[UInt8]] {
            if let file = fields["file"] as? String {
                let bytes = [UInt8](try Data(contentsOf: ColmiR02ClientCaptures.directory.appendingPathComponent(file)))
                try #require(bytes.count % 17 == 0, "\(file) is not a run of 17-byte records")
                return stride(from: 0, to: bytes.count, by: 17).map { start in
                    #expect(bytes[start + 16] == 0x0A, "record at \(start) of \(file) does not end with a newline")
                    return Array(bytes[start..<start + 16])
                }
            }
            return (fields["packets"] as? [String] ?? []).map(colmiHex)
        }
    }

    /// captures.json as a whole.
    static let document: Entry = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("captures.json")),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            Issue.record("cannot read protocol-spec/qring/captures/colmi-r02-client/captures.json")
            return Entry(fields: [:])
        }
        return Entry(fields: object)
    }()

    static func section(_ key: String) -> [Entry] {
        (document.fields[key] as? [[String: Any]] ?? []).map { Entry(fields: $0) }
    }

    static let heartRateLogs = section("heartRateLogs")
    static let steps = section("steps")
    static let answers = section("answers")
    static let unexplained = section("unexplained")

    static let utc = TimeZone(identifier: "UTC")!

    /// The whole day's log of the recorded file, read as the product reads it.
    static func octoberLog() throws -> [HeartRateSample] {
        let entry = try #require(heartRateLogs.first { $0.fields["file"] as? String == "heart_rate_log_1730412850.bin" })
        var assembler = HeartRateLogAssembler(day: RingDate(year: 2024, month: 10, day: 31), zone: utc)
        var outcome: HeartRateLog?
        for packet in try entry.packets() { outcome = try assembler.feed(packet) }
        guard case let .samples(samples, _)? = outcome else {
            Issue.record("the recorded log did not decode to samples: \(String(describing: outcome))")
            return []
        }
        return samples
    }
}

private func colmiHex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
        out.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return out
}

private func number(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? -1 }

private func utcSeconds(_ iso: String) -> Int64? {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = ColmiR02ClientCaptures.utc
    return formatter.date(from: iso).map { Int64($0.timeIntervalSince1970) }
}

@Suite struct ColmiR02ClientCaptureTests {
    @Test func everySectionHasItsCaptures() {
        #expect(ColmiR02ClientCaptures.document.fields["source"] as? [String: Any] != nil)
        #expect(ColmiR02ClientCaptures.heartRateLogs.count == 3)
        #expect(ColmiR02ClientCaptures.steps.count == 3)
        #expect(ColmiR02ClientCaptures.answers.count == 6)
        #expect(ColmiR02ClientCaptures.unexplained.count == 4)
    }

    /// Each heart-rate log equals colmi_r02_client's reading: its 288 slots, 0 for no reading,
    /// slot k at the midnight of the timestamp's date (UTC) + 5k minutes; the slot length; and the
    /// log is complete at its last packet, not before.
    @Test(arguments: ColmiR02ClientCaptures.heartRateLogs)
    func heartRateLogEqualsTheClientsReading(_ entry: ColmiR02ClientCaptures.Entry) throws {
        let reference = entry.reference
        let packets = try entry.packets()
        let timestamp = (reference["timestamp"] as? String).flatMap(utcSeconds)
        let day = timestamp.map { RingDateTime(wallSeconds: $0).date } ?? RingDate(year: 2024, month: 1, day: 1)
        var assembler = HeartRateLogAssembler(day: day, zone: ColmiR02ClientCaptures.utc)
        var outcome: HeartRateLog?
        for (index, packet) in packets.enumerated() {
            outcome = try assembler.feed(packet)
            if index < packets.count - 1 { #expect(outcome == nil, "the log ended at packet \(index) of \(packets.count)") }
        }
        if reference["noData"] as? Bool == true {
            #expect(outcome == .noData)
            return
        }
        if let size = reference["size"] { #expect(packets.count == number(size)) }
        let rates = reference["heartRates"] as? [Int] ?? []
        #expect(rates.count == 288)
        let midnight = day.wallSeconds
        let expected = rates.enumerated().filter { $0.element != 0 }.map {
            HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(midnight + Int64($0.offset * 300))), bpm: $0.element)
        }
        #expect(outcome == .samples(expected, slotMinutesReported: number(reference["range"])))
    }

    /// The recorded file, restated by hand: 62 readings; three in the small hours, a run every five
    /// minutes from 15:00 to 19:25 UTC and five from 21:50 to 22:10. The last one, 22:10, comes just
    /// before the recording's own time (its name, 1730412850, is 2024-10-31 22:14:10 UTC), which
    /// is what reading slot 0 as the midnight of the ring's date gives.
    @Test func recordedLogReadsAsTheClientsTestSays() throws {
        let samples = try ColmiR02ClientCaptures.octoberLog()
        let midnight = RingDate(year: 2024, month: 10, day: 31).wallSeconds
        func at(_ hour: Int, _ minute: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(midnight + Int64(hour * 3600 + minute * 60))) }
        #expect(samples.count == 62)
        #expect(Array(samples.prefix(3)) == [HeartRateSample(time: at(0, 30), bpm: 104), HeartRateSample(time: at(1, 0), bpm: 111),
                                              HeartRateSample(time: at(2, 0), bpm: 66)])
        #expect(samples.dropFirst(3).prefix(54).map(\.time) == (0..<54).map { at(15, 0).addingTimeInterval(TimeInterval($0 * 300)) })
        #expect(samples[3].bpm == 89 && samples[56].bpm == 100)
        #expect(samples.suffix(5) == [HeartRateSample(time: at(21, 50), bpm: 70), HeartRateSample(time: at(21, 55), bpm: 84),
                                      HeartRateSample(time: at(22, 0), bpm: 113), HeartRateSample(time: at(22, 5), bpm: 75),
                                      HeartRateSample(time: at(22, 10), bpm: 111)])
        #expect(try #require(samples.last).time < Date(timeIntervalSince1970: 1_730_412_850))
    }

    /// The August log of colmi_r02_client's test, restated by hand: hourly readings.
    @Test func augustLogReadsAsTheClientsParserDoes() throws {
        let entry = try #require(ColmiR02ClientCaptures.heartRateLogs.first { ($0.fields["name"] as? String ?? "").contains("2024-08-10") })
        var assembler = HeartRateLogAssembler(day: RingDate(year: 2024, month: 8, day: 10), zone: ColmiR02ClientCaptures.utc)
        var outcome: HeartRateLog?
        for packet in try entry.packets() { outcome = try assembler.feed(packet) }
        let midnight: Int64 = 1_723_248_000 // 2024-08-10 00:00 UTC, the timestamp in packet 1
        let expected = [(15, 89), (16, 107), (17, 96), (18, 107), (20, 80), (21, 70)].map {
            HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(midnight + Int64($0.0 * 3600))), bpm: $0.1)
        }
        #expect(outcome == .samples(expected, slotMinutesReported: 5))
    }

    /// Each steps answer equals colmi_r02_client's `SportDetail`s: the date, the quarter-hour
    /// (its start on the ring's clock, and as an instant in UTC), calories (times ten: the header
    /// says so), steps and distance; or no steps.
    @Test(arguments: ColmiR02ClientCaptures.steps)
    func stepsEqualTheClientsReading(_ entry: ColmiR02ClientCaptures.Entry) throws {
        let packets = try entry.packets()
        var assembler = StepsAssembler(zone: ColmiR02ClientCaptures.utc)
        var outcome: [RingStepsInterval]?
        for (index, packet) in packets.enumerated() {
            outcome = try assembler.feed(packet)
            if index < packets.count - 1 { #expect(outcome == nil, "the answer ended at packet \(index) of \(packets.count)") }
        }
        let intervals = try #require(outcome)
        if entry.reference["noData"] as? Bool == true {
            #expect(intervals.isEmpty)
            return
        }
        let details = entry.reference["details"] as? [[String: Any]] ?? []
        #expect(intervals.count == details.count)
        for (got, want) in zip(intervals, details) {
            let date = RingDate(year: number(want["year"]), month: number(want["month"]), day: number(want["day"]))
            let quarter = number(want["timeIndex"])
            #expect(got.wall == RingDateTime(date: date, secondOfDay: quarter * 900))
            #expect(got.start == date.wallSeconds + Int64(quarter * 900))
            #expect(got.calories == number(want["calories"]))
            #expect(got.steps == number(want["steps"]))
            #expect(got.distanceMeters == number(want["distance"]))
        }
    }

    /// The one-packet answers equal colmi_r02_client's reading of them.
    @Test(arguments: ColmiR02ClientCaptures.answers)
    func answerEqualsTheClientsReading(_ entry: ColmiR02ClientCaptures.Entry) throws {
        let reference = entry.reference
        let expected: QRingAnswer
        switch reference["kind"] as? String {
        case "battery":
            expected = .battery(RingBattery(level: number(reference["batteryLevel"]), charging: try #require(reference["charging"] as? Bool)))
        case "realTime":
            #expect(number(reference["type"]) == 1, "type 1 is heart rate")
            if let code = reference["errorCode"] {
                expected = .realTimeError(code: UInt8(number(code)))
            } else {
                expected = .realTimeHeartRate(bpm: number(reference["value"]))
            }
        case "heartRateLogSettings":
            expected = .heartRateLogSettings(MonitorConfig(type: .heartRate, schedule: MonitorSchedule(
                enabled: try #require(reference["enabled"] as? Bool), startMinute: 0, endMinute: 1440,
                intervalMinutes: UInt16(number(reference["interval"])))))
        case "setTime":
            expected = .timeSet(newSleepProtocol: try #require(reference["mNewSleepProtocol"] as? Bool))
        case let kind:
            Issue.record("reference kind \(kind ?? "none") has no case here")
            return
        }
        #expect(try QRingAnswer(packet: entry.packet) == expected)
    }

    /// Packets colmi_r02_client got from its ring and lists as not understood (MYSTERIES.md), so
    /// there is no reference reading: the `73 0c` ones read as battery notices, per the spec's §3
    /// (from Gadgetbridge), and `2f` (packet size, a command this dialect does not read) is refused
    /// as such; the gateway drops and counts it.
    @Test func packetsTheClientLeavesUnexplained() throws {
        let packets = ColmiR02ClientCaptures.unexplained.map(\.packet)
        try #require(packets.count == 4)
        #expect(try QRingAnswer(packet: packets[0]) == .batteryPushed(RingBattery(level: 21, charging: false)))
        #expect(try QRingAnswer(packet: packets[1]) == .batteryPushed(RingBattery(level: 43, charging: true)))
        #expect(try QRingAnswer(packet: packets[2]) == .batteryPushed(RingBattery(level: 100, charging: true)))
        do {
            let answer = try QRingAnswer(packet: packets[3])
            Issue.record("read as \(answer); expected unexpectedCommand")
        } catch {
            #expect(error.code == .unexpectedCommand)
        }
    }
}
