import Foundation
import Testing
import TSTestSupport

/// `protocol decode` in every dialect: a QRing ring's exchange found by the GATT discovery in a
/// capture built byte by byte here, pasted streams with --dialect, a real ring's bytes
/// (protocol-spec/qring/captures/colmi-r02-client, colmi_r02_client, MIT) read as that client
/// reads them, and the bad input a person may bring: a capture of another dialect than
/// --dialect says, a truncated capture, a capture with no watch traffic.
@Suite struct DecodeDialectsCLITests {
    typealias C = CaptureCLITests

    static func packet(_ command: UInt8, _ data: [UInt8] = []) -> [UInt8] {
        let first15 = [command] + data + [UInt8](repeating: 0, count: 14 - data.count)
        return first15 + [UInt8(truncatingIfNeeded: first15.reduce(0) { $0 + Int($1) })]
    }

    static func uuid(_ text: String) -> [UInt8] {
        let hex = Array(text.filter { $0 != "-" })
        return stride(from: 0, to: 32, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16) ?? 0 }.reversed()
    }

    /// A link to a ring whose command service the capture discovers: a battery request written
    /// to 0x0012, its answer (64 %) notified on 0x0014, then a damaged answer.
    static let ringCapture: [UInt8] = {
        var bytes = C.header
        let connection: [UInt8] = [0x3E, 19, 0x01, 0x00] + C.le16(0x0040) + [0x00, 0x00, 0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0] + C.le16(24) + C.le16(0) + C.le16(42) + [0]
        bytes += C.record(3, connection, at: 0)
        bytes += C.att(5, [0x11, 20] + C.le16(0x0010) + C.le16(0x0015) + uuid("6e40fff0-b5a3-f393-e0a9-e50e24dcca9e"), at: 500)
        bytes += C.att(5, [0x09, 21] + C.le16(0x0011) + [0x04] + C.le16(0x0012) + uuid("6e400002-b5a3-f393-e0a9-e50e24dcca9e")
            + C.le16(0x0013) + [0x10] + C.le16(0x0014) + uuid("6e400003-b5a3-f393-e0a9-e50e24dcca9e"), at: 600)
        bytes += C.att(4, [0x52] + C.le16(0x0012) + packet(0x03), at: 1000)
        bytes += C.att(5, [0x1B] + C.le16(0x0014) + packet(0x03, [64, 0]), at: 2000)
        var damaged = packet(0x03, [65, 0])
        damaged[15] ^= 0xFF
        bytes += C.att(5, [0x1B] + C.le16(0x0014) + damaged, at: 3000)
        return bytes
    }()

    @Test func aRingsExchangeIsFoundByItsServiceAndDecoded() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let path = try C().write(Self.ringCapture, cli)
        let text = try await cli.runDetached(["protocol", "decode", "--btsnoop", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("dialect qring: its service 6e40fff0-b5a3-f393-e0a9-e50e24dcca9e found by the capture's GATT discovery"), "\(text.stdout)")
        #expect(text.stdout.contains("frame 1 (central → watch): battery request"))
        #expect(text.stdout.contains("frame 2 (watch → central): battery: battery 64 %"))
        #expect(text.stdout.contains("corrupt frame (watch → central): battery: checksum"), "the damaged answer is shown, not dropped")
        let json = try await cli.runDetached(["protocol", "decode", "--btsnoop", path, "--json"])
        let objects = try json.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["type"] as? String } == ["frame", "frame", "corruptFrame"])
        #expect(objects.allSatisfy { $0["dialect"] as? String == "qring" })
        let answer = try #require(objects[1]["message"] as? [String: Any])
        #expect((answer["fields"] as? [String: Any])?["level"] as? Int == 64)
        let out = cli.home.appendingPathComponent("ring.jsonl").path
        let replayable = try await cli.runDetached(["protocol", "decode", "--btsnoop", path, "--to-capture", out])
        #expect(replayable.status == 0, "\(replayable.stderr)")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
    }

    @Test func aCaptureOfAnotherDialectThanAskedIsAClearError() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let ring = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(Self.ringCapture, cli), "--dialect", "v1"])
        #expect(ring.status == 64)
        #expect(ring.stderr.contains("carries the qring dialect's exchange"), "\(ring.stderr)")
        #expect(ring.stderr.contains("--dialect qring"))
        let v1 = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(C.capture, cli), "--dialect", "npk"])
        #expect(v1.status == 64)
        #expect(v1.stderr.contains("carries the v1 dialect's exchange"), "\(v1.stderr)")
        #expect(v1.stdout.isEmpty)
    }

    @Test func aTruncatedCaptureIsAClearError() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let result = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(Array(Self.ringCapture.dropLast(7)), cli)])
        #expect(result.status == 65)
        #expect(result.stderr.contains("the file ends inside a record"), "\(result.stderr)")
    }

    @Test func aCaptureWithNoWatchTrafficIsAClearError() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        var bytes = C.header
        let connection: [UInt8] = [0x3E, 19, 0x01, 0x00] + C.le16(0x0040) + [0x00, 0x00, 0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0] + C.le16(24) + C.le16(0) + C.le16(42) + [0]
        bytes += C.record(3, connection, at: 0)
        bytes += C.att(4, [0x12] + C.le16(0x0003) + [0x01, 0x00], at: 1000)
        bytes += C.att(5, [0x1B] + C.le16(0x0020) + [0x42], at: 2000)
        let result = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(bytes, cli), "--dialect", "qring"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("holds no ATT write or notification that carries frames of qring (2 ATT PDU(s) in all)"), "\(result.stderr)")
    }

    @Test func pastedBytesAreDecodedInTheDialectAsked() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let hex = Self.packet(0x03, [64, 1]).map { String(format: "%02x", $0) }.joined()
        let ring = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", hex])
        #expect(ring.status == 0, "\(ring.stderr)")
        #expect(ring.stdout.contains("battery 64 %, charging"))
        let asRequest = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", "--from", "central", hex])
        #expect(asRequest.stdout.contains("battery request"))
        let wrong = try await cli.runDetached(["protocol", "decode", "--dialect", "npk", hex])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("no npk frame found in 16 byte(s)"), "\(wrong.stderr)")
        let standard = try await cli.runDetached(["protocol", "decode", "--dialect", "standard", hex])
        #expect(standard.status == 64)
        #expect(standard.stderr.contains("has no frames of its own"))
    }

    /// TopStep SDK's example frame (a file head the central sends): without --from the bytes are
    /// read both ways and shown as the way they parse, which the output says; --from still decides.
    @Test func pastedBytesWithoutFromAreReadTheWayTheyParse() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let hex = "ab0621000012269900040a062f6d7573696310e1de92a50918b0ba1f"
        let pasted = try await cli.runDetached(["protocol", "decode", "--dialect", "npk", hex])
        #expect(pasted.exited(0), "\(pasted.summary)")
        #expect(pasted.stdout.hasPrefix("the bytes parse as the central's (a write, central → watch); --from watch reads them as the watch's"), "\(pasted.stdout)")
        #expect(pasted.stdout.contains("frame 1: ") && !pasted.stdout.contains("invalid message"), "\(pasted.stdout)")
        let json = try await cli.runDetached(["protocol", "decode", "--dialect", "npk", "--json", hex])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "frame" && object["direction"] as? String == "write", "\(json.stdout)")
        #expect(json.stderr.contains("the bytes parse as the central's"), "\(json.stderr)")
        let asWatch = try await cli.runDetached(["protocol", "decode", "--dialect", "npk", "--from", "watch", hex])
        #expect(asWatch.stdout.contains("from the watch has no payload") && !asWatch.stdout.contains("parse as"), "\(asWatch.stdout)")
        let ring = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", Self.packet(0x03, [64, 1]).map { String(format: "%02x", $0) }.joined()])
        #expect(ring.stdout.contains("the bytes parse as the watch's (a notification, watch → central)") && ring.stdout.contains("battery 64 %"), "\(ring.stdout)")
    }
}

/// A real ring's bytes (colmi_r02_client's tests and recording, MIT; README.md beside them names
/// the source, commit and licence) decoded by `protocol decode --dialect qring` must equal that
/// client's reading. The client sets the ring's clock in UTC, so the decoder reads it in UTC.
@Suite struct ColmiR02ClientDecodeTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol-spec/qring/captures/colmi-r02-client")

    static func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("captures.json"))) as? [String: Any])
    }

    static func decode(_ cli: CLI, _ hex: [String]) async throws -> [[String: Any]] {
        let result = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", "--json"] + hex, environment: ["TZ": "UTC"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func theAnswersReadAsTheClientReadsThem() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let answers = try #require(try Self.document()["answers"] as? [[String: Any]])
        #expect(answers.count == 6)
        for answer in answers {
            let reference = try #require(answer["reference"] as? [String: Any])
            let decoded = try await Self.decode(cli, [try #require(answer["packet"] as? String)])
            #expect(decoded.count == 1 && decoded[0]["type"] as? String == "frame", "\(answer["name"] ?? "")")
            let fields = (decoded.first?["message"] as? [String: Any])?["fields"] as? [String: Any] ?? [:]
            switch reference["kind"] as? String {
            case "battery":
                #expect(fields["level"] as? Int == reference["batteryLevel"] as? Int)
                #expect(fields["charging"] as? Bool == reference["charging"] as? Bool)
            case "realTime":
                if let value = reference["value"] as? Int { #expect(fields["bpm"] as? Int == value) }
                if let code = reference["errorCode"] as? Int { #expect(fields["error"] as? Int == code) }
            case "heartRateLogSettings":
                #expect(fields["enabled"] as? Bool == reference["enabled"] as? Bool)
                #expect(fields["intervalMinutes"] as? Int == reference["interval"] as? Int)
            case "setTime":
                #expect(fields["newSleepProtocol"] as? Bool == reference["mNewSleepProtocol"] as? Bool)
            default:
                Issue.record("an answer of a kind this test does not know: \(reference)")
            }
        }
    }

    /// The ring's clock read in the zone --time-zone names, not this machine's: the same log read
    /// with --time-zone Asia/Tokyo on a UTC machine is 9 hours earlier, and --time-zone UTC on a
    /// Tokyo machine is what a UTC machine reads.
    @Test func theRingsClockIsReadInTheZoneTimeZoneNames() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let logs = try #require(try Self.document()["heartRateLogs"] as? [[String: Any]])
        let packets = try #require(logs.compactMap { $0["packets"] as? [String] }.first { !$0.isEmpty })
        func times(_ options: [String], machine zone: String) async throws -> [Double] {
            let result = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", "--json"] + options + packets, environment: ["TZ": zone])
            #expect(result.exited(0), "\(result.summary)")
            let objects = try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let samples = objects.compactMap { ($0["message"] as? [String: Any])?["heartRate"] as? [[String: Any]] }.flatMap { $0 }
            return samples.compactMap { ($0["time"] as? String).flatMap(ISO8601DateFormatter().date(from:))?.timeIntervalSince1970 }
        }
        let utc = try await times([], machine: "UTC")
        #expect(!utc.isEmpty)
        #expect(try await times(["--time-zone", "Asia/Tokyo"], machine: "UTC") == utc.map { $0 - 9 * 3600 })
        #expect(try await times(["--time-zone", "UTC"], machine: "Asia/Tokyo") == utc)
        let unknown = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", "--time-zone", "Mars/Base"] + packets)
        #expect(unknown.exited(64) && unknown.stderr.contains("--time-zone \"Mars/Base\" is not a time zone"), "\(unknown.summary)")
    }

    /// Each heart-rate log: its readings (the non-zero slots, in order) and their times, slot k
    /// at the midnight of the log's day (UTC) + 5k minutes.
    @Test func theHeartRateLogsReadAsTheClientReadsThem() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let logs = try #require(try Self.document()["heartRateLogs"] as? [[String: Any]])
        #expect(logs.count == 3)
        for log in logs {
            var hex = log["packets"] as? [String] ?? []
            if let file = log["file"] as? String {
                let bytes = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(file)))
                hex = stride(from: 0, to: bytes.count, by: 17).map { bytes[$0..<$0 + 16].map { String(format: "%02x", $0) }.joined() }
            }
            let decoded = try await Self.decode(cli, hex)
            #expect(decoded.count == hex.count)
            #expect(decoded.allSatisfy { $0["type"] as? String == "frame" })
            let samples = (decoded.last?["message"] as? [String: Any])?["heartRate"] as? [[String: Any]]
            let reference = try #require(log["reference"] as? [String: Any])
            if reference["noData"] as? Bool == true {
                #expect(samples?.isEmpty == true)
                continue
            }
            let rates = reference["heartRates"] as? [Int] ?? []
            let expected = rates.enumerated().filter { $0.element != 0 }
            #expect(samples?.map { $0["bpm"] as? Int } == expected.map(\.element))
            let formatter = ISO8601DateFormatter()
            let stamp = try #require((reference["timestamp"] as? String).flatMap(formatter.date(from:)))
            let midnight = Double(Int(stamp.timeIntervalSince1970) / 86400 * 86400)
            let times = samples?.compactMap { ($0["time"] as? String).flatMap(formatter.date(from:))?.timeIntervalSince1970 }
            #expect(times == expected.map { midnight + Double($0.offset * 300) })
        }
    }
}
