import Foundation
import Testing
import TSModels
import TSTestSupport
import TSSnoop

@Suite struct BTSnoopFormatTests {
    let records = [
        BTSnoopRecord(data: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], flags: 0 << 16 | 3, unixMicroseconds: 1_762_156_800_123_456),
        BTSnoopRecord(data: [], flags: 1 << 16 | 8, unixMicroseconds: 1_762_156_800_200_000),
        BTSnoopRecord(data: Array(0..<200), flags: 0 << 16 | 4, unixMicroseconds: 1_762_156_801_000_001),
    ]

    @Test func theHeaderIsTheFormatsMagicVersionAndMonitorDatalink() {
        #expect(BTSnoop.header(datalink: .monitor) == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x07, 0xD1])
    }

    @Test func aRecordIsBigEndianWithTheTimestampInMicrosecondsSinceZeroAD() {
        let record = BTSnoopRecord(data: [0xAA, 0xBB], flags: 2 << 16 | 5, unixMicroseconds: 0)
        let bytes = BTSnoop.encode(record)
        #expect(Array(bytes[0..<16]) == [0, 0, 0, 2, 0, 0, 0, 2, 0, 2, 0, 5, 0, 0, 0, 0])
        // 1970-01-01 is 0x00DCDDB30F2F8000 µs after 0 AD in the format's reckoning.
        #expect(Array(bytes[16..<24]) == [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00])
        #expect(Array(bytes[24...]) == [0xAA, 0xBB])
    }

    @Test func writtenRecordsReadBackUnchanged() throws {
        let file = try BTSnoop.decode(BTSnoop.encode(datalink: .monitor, records: records))
        #expect(file.datalink == .monitor)
        #expect(file.records == records)
        #expect(file.records[0].unixMicroseconds == 1_762_156_800_123_456)
    }

    @Test func monitorPacketsSurviveTheFile() throws {
        let packet = HCIPacket(index: 3, opcode: .aclRX, data: [1, 2, 3], unixMicroseconds: 42)
        let file = try BTSnoop.decode(BTSnoop.encode(datalink: .monitor, records: [packet.monitorRecord]))
        #expect(HCIPacket.packets(of: file) == [packet])
    }

    @Test func h4RecordsBecomePacketsOfControllerZero() throws {
        let file = BTSnoopFile(datalink: .hciUART, records: [
            BTSnoopRecord(data: [0x02, 0x40, 0x20, 0x01, 0x00, 0x99], flags: 1, unixMicroseconds: 5),
            BTSnoopRecord(data: [0x01, 0x03, 0x0C, 0x00], flags: 2, unixMicroseconds: 6),
            BTSnoopRecord(data: [], flags: 0, unixMicroseconds: 7),
        ])
        let packets = HCIPacket.packets(of: try BTSnoop.decode(BTSnoop.encode(datalink: .hciUART, records: file.records)))
        #expect(packets.map(\.kind) == [.aclRX, .command])
        #expect(packets[0].data == [0x40, 0x20, 0x01, 0x00, 0x99])
    }

    // Malformed files: each is refused with its own error, none traps.

    @Test func aTruncatedHeaderIsRefused() {
        #expect(throws: BTSnoopError.truncatedHeader(size: 10)) { try BTSnoop.decode(Array(BTSnoop.header(datalink: .monitor).prefix(10))) }
        #expect(throws: BTSnoopError.truncatedHeader(size: 0)) { try BTSnoop.decode([]) }
    }

    @Test func aWrongMagicIsRefused() {
        var bytes = BTSnoop.header(datalink: .monitor)
        bytes[0] = UInt8(ascii: "p")
        #expect(throws: BTSnoopError.wrongMagic(Array("ptsnoop".utf8) + [0])) { try BTSnoop.decode(bytes) }
        let pcap: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0] + [UInt8](repeating: 0, count: 16)
        #expect(throws: BTSnoopError.wrongMagic([0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0])) { try BTSnoop.decode(pcap) }
    }

    @Test func aWrongVersionIsRefused() {
        var bytes = BTSnoop.header(datalink: .monitor)
        bytes[11] = 2
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoop.decode(bytes) }
    }

    @Test func aWrongDatalinkIsRefused() {
        var bytes = BTSnoop.header(datalink: .monitor)
        bytes[14] = 0x03
        bytes[15] = 0xE9  // 1001, HCI unencapsulated
        #expect(throws: BTSnoopError.unsupportedDatalink(1001)) { try BTSnoop.decode(bytes) }
    }

    @Test func aRecordLongerThanTheRestOfTheFileIsRefused() {
        let bytes = BTSnoop.encode(datalink: .monitor, records: records)
        let cut = Array(bytes.dropLast(50))
        #expect(throws: BTSnoopError.recordPastEnd(record: 3, offset: 16 + 30 + 24, length: 200, available: 150)) { try BTSnoop.decode(cut) }
    }

    @Test func aRecordWhoseLengthPointsFarPastTheEndIsRefused() {
        var bytes = BTSnoop.header(datalink: .monitor)
        bytes += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16) + [1, 2, 3]
        #expect(throws: BTSnoopError.recordPastEnd(record: 1, offset: 16, length: 0xFFFF_FFFF, available: 3)) { try BTSnoop.decode(bytes) }
    }

    @Test func aRecordHeaderCutShortIsRefused() {
        let bytes = BTSnoop.header(datalink: .monitor) + [0, 0, 0, 1, 0, 0]
        #expect(throws: BTSnoopError.truncatedRecordHeader(record: 1, offset: 16, available: 6)) { try BTSnoop.decode(bytes) }
    }

    @Test func moreIncludedThanOriginalBytesIsRefused() {
        var record = BTSnoop.encode(BTSnoopRecord(data: [1, 2, 3, 4], flags: 3, unixMicroseconds: 0))
        record[3] = 2  // original length 2 < included 4
        #expect(throws: BTSnoopError.includedExceedsOriginal(record: 1, included: 4, original: 2)) {
            try BTSnoop.decode(BTSnoop.header(datalink: .monitor) + record)
        }
    }

    @Test func everyPrefixOfAFileReadsOrFailsWithABTSnoopError() {
        let bytes = BTSnoop.encode(datalink: .monitor, records: records)
        for length in 0...bytes.count {
            do {
                let file = try BTSnoop.decode(Array(bytes.prefix(length)))
                #expect(file.records == Array(records.prefix(file.records.count)))
            } catch {
                #expect(error.category == .invalidInput)
                #expect(!error.description.isEmpty)
            }
        }
    }

    /// The file is checked by a reader this project did not write.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"), "needs Debian's tshark"))
    func tsharkReadsTheATTOperationsOfAWrittenCapture() throws {
        var link = HCIBuilder()
        let peer = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        link.newIndex(address: try #require(BluetoothAddress("00:AA:01:00:00:00")))
        link.connectionComplete(peer: peer)
        link.att([0x52] + le16(0x002A) + [0xA5, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x0E, 0xDC, 0x91, 0xB6], sent: true)
        link.att([0x1B] + le16(0x002C) + Array(repeating: 0x11, count: 60), sent: false)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tshark-\(UUID()).btsnoop")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(BTSnoop.encode(datalink: .monitor, records: link.packets.map(\.monitorRecord))).write(to: url)
        let tshark = Process()
        tshark.executableURL = URL(fileURLWithPath: "/usr/bin/tshark")
        tshark.arguments = ["-r", url.path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode", "-e", "btatt.handle"]
        let output = Pipe()
        tshark.standardOutput = output
        tshark.standardError = FileHandle.nullDevice
        try tshark.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tshark.waitPolling()
        #expect(tshark.terminationStatus == 0)
        let lines = text.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines == [["0x52", "0x002a"], ["0x1b", "0x002c"]])
    }
}
