import TSTestSupport
import Foundation
import Testing

/// `protocol decode --btsnoop` on capture files built byte by byte here (not with TSSnoop), and
/// `capture`/`adapter info` argument checks.
@Suite struct CaptureCLITests {
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    /// A monitor-format record of controller 0: opcode 3 event, 4 ACL TX, 5 ACL RX.
    static func record(_ opcode: UInt32, _ data: [UInt8], at microsecond: UInt64) -> [UInt8] {
        let time = 0x00DC_DDB3_0F2F_8000 + 1_762_156_800_000_000 + microsecond
        return be32(UInt32(data.count)) + be32(UInt32(data.count)) + be32(opcode) + be32(0) + be32(UInt32(time >> 32)) + be32(UInt32(time & 0xFFFF_FFFF)) + data
    }

    static func att(_ opcode: UInt32, _ pdu: [UInt8], at time: UInt64) -> [UInt8] {
        let l2cap = le16(UInt16(pdu.count)) + le16(4) + pdu
        return record(opcode, le16(0x0040 | (opcode == 4 ? 0 : 0x2000)) + le16(UInt16(l2cap.count)) + l2cap, at: time)
    }

    /// A link to C0:FF:EE:00:00:01 with a DEVICE_INFO request written and a BATTERY response notified.
    static let capture: [UInt8] = {
        var bytes = Array("btsnoop".utf8) + [0] + be32(1) + be32(2001)
        let connection: [UInt8] = [0x3E, 19, 0x01, 0x00] + le16(0x0040) + [0x00, 0x00, 0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0] + le16(24) + le16(0) + le16(42) + [0]
        bytes += record(3, connection, at: 0)
        bytes += att(4, [0x52] + le16(0x002A) + [0xA5, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x0E, 0xDC, 0x91, 0xB6], at: 1000)
        return bytes
    }()

    func write(_ bytes: [UInt8], _ cli: CLI) throws -> String {
        let path = cli.home.appendingPathComponent("capture.btsnoop").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func decodeFindsTheWatchExchangeInACapture() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let path = try write(Self.capture, cli)
        let text = try await cli.runDetached(["protocol", "decode", "--btsnoop", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("watch service on hci0 handle 64: write handle(s) [\"0x002a\"]"))
        #expect(text.stdout.contains("frame 1 (central → watch): seq 1, command 0x0002, flags 0x0, 0 payload byte(s): deviceInfo.request"))
        let json = try await cli.runDetached(["protocol", "decode", "--btsnoop", path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["direction"] as? String == "write")
        #expect(object["connection"] as? String == "hci0 handle 64")
        #expect((object["message"] as? [String: Any])?["kind"] as? String == "deviceInfo.request")
    }

    @Test func decodeWritesAReplayableCapture() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let path = try write(Self.capture, cli)
        let out = cli.home.appendingPathComponent("replay.jsonl").path
        let result = try await cli.runDetached(["protocol", "decode", "--btsnoop", path, "--to-capture", out])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""direction":"open""#) == true)
        #expect(lines.last?.contains(#""hex":"a5010001020000000edc91b6""#) == true)
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    static let header: [UInt8] = Array("btsnoop".utf8) + [0] + be32(1) + be32(2001)
    static let malformed: [([UInt8], String)] = {
        var wrongMagic = header
        wrongMagic[6] = UInt8(ascii: "q")
        var wrongDatalink = header
        wrongDatalink[15] = 0xE9
        wrongDatalink[14] = 0x03
        var pastEnd = header + be32(100) + be32(100)
        pastEnd += [UInt8](repeating: 0, count: 16) + [1, 2]
        return [
            ([], "shorter than the 16-byte btsnoop header"),
            (wrongMagic, "instead of \"btsnoop\\0\""),
            (wrongDatalink, "btsnoop datalink 1001 is not supported"),
            (pastEnd, "has 100 byte(s) of data but the file ends after 2"),
        ]
    }()

    @Test(arguments: CaptureCLITests.malformed)
    func malformedCapturesAreRefused(bytes: [UInt8], message: String) async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let result = try await cli.runDetached(["protocol", "decode", "--btsnoop", try write(bytes, cli)])
        #expect(result.status == 65)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aCaptureWithoutTheWatchIsAClearError() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let result = try await cli.runDetached(["protocol", "decode", "--btsnoop", try write(Array("btsnoop".utf8) + [0] + Self.be32(1) + Self.be32(2001), cli)])
        #expect(result.status == 65)
        #expect(result.stderr.contains("holds no ATT write or notification that carries frames of v1, npk, qring"), "\(result.stderr)")
    }

    @Test func captureAndAdapterInfoCheckTheirArguments() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let badAdapter = try await cli.runDetached(["capture", "--out", cli.home.appendingPathComponent("x").path, "--adapter", "wlan0"])
        #expect(badAdapter.status == 64)
        #expect(badAdapter.stderr.contains("\"wlan0\" is not an adapter name"))
        let badDevice = try await cli.runDetached(["capture", "--out", "x", "--device", "C0:FF:EE"])
        #expect(badDevice.status == 64)
        let info = try await cli.runDetached(["adapter", "info", "--adapter", "hcix"])
        #expect(info.status == 64)
    }
}
