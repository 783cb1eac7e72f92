import Foundation
import Testing
import TSGarmin
import TSModels

/// FIT files through the project's encoder and decoder (protocol-spec/garmin/garmin.md §9, §11),
/// and the defects a file from a watch or a person may hold: each a clear error or a right read.
@Suite struct FITTests {
    /// 2026-11-20 22:00 UTC.
    static let night = Int64(1_795_211_200)

    static let items: [SleepItem] = [
        SleepItem(stage: .light, start: night, duration: 1800), SleepItem(stage: .deep, start: night + 1800, duration: 3600),
        SleepItem(stage: .rem, start: night + 5400, duration: 1200), SleepItem(stage: .awake, start: night + 6600, duration: 20),
        // A gap, then more.
        SleepItem(stage: .light, start: night + 9000, duration: 5400),
    ]

    @Test("sleep items written as sleep_level records read back equal, with and without compressed timestamps", arguments: [false, true])
    func sleepRoundTrip(compressed: Bool) throws {
        let bytes = try FITRecords.sleepFile(Self.items, created: Self.night, compressesTimestamps: compressed)
        let files = try FITDecoder.decode(bytes)
        #expect(files.count == 1)
        #expect(files[0].fileType == FITFileType.sleep)
        #expect(FITRecords.sleepItems(files[0]) == Self.items)
        // The 20-second awake item ends within 31 s of the record before: compressed when asked.
        #expect(bytes.contains { $0 & 0x80 != 0 && $0 & 0x60 == 0 } || !compressed)
    }

    static func samples(every seconds: Int64, count: Int, from start: Int64 = night) -> [HeartRateSample] {
        (0..<count).map { HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(start + Int64($0) * seconds)), bpm: 50 + $0 % 40) }
    }

    @Test("heart-rate samples written as monitoring records read back equal: timestamp_16, compressed, across a rollover, after a long gap",
          arguments: [false, true])
    func monitoringRoundTrip(compressed: Bool) throws {
        // Every 15 s for 30 h: timestamp_16 wraps (65536 s) once or twice on the way.
        var samples = Self.samples(every: 15, count: 7200)
        // A gap of two days: a full timestamp again.
        samples += Self.samples(every: 60, count: 10, from: Self.night + 3 * 86_400)
        let bytes = try FITRecords.monitoringFile(samples, created: Self.night, compressesTimestamps: compressed)
        let files = try FITDecoder.decode(bytes)
        #expect(FITRecords.heartRateSamples(files[0]) == samples)
    }

    @Test("timestamp_16 resolves across its rollover against the last full timestamp")
    func timestamp16Rollover() throws {
        let reference = UInt32(0x1234_FFF0)
        var encoder = FITEncoder()
        try encoder.write(global: FITGlobal.monitoring, [.init(FITField.timestamp, .uint32, .unsigned(UInt64(reference))), .init(27, .uint8, .unsigned(60))])
        // 0x0005 after 0xFFF0: 21 s later, in the next 65536-second period.
        try encoder.write(global: FITGlobal.monitoring, [.init(26, .uint16, .unsigned(0x0005)), .init(27, .uint8, .unsigned(61))])
        let samples = FITRecords.heartRateSamples(try #require(try FITDecoder.decode(encoder.file()).first))
        #expect(samples.map(\.time) == [reference, reference + 21].map { Date(timeIntervalSince1970: TimeInterval(GarminTime.unix($0))) })
    }

    @Test("a file whose CRC is wrong is refused with both values, not read")
    func wrongCRC() throws {
        var bytes = try FITRecords.sleepFile(Self.items, created: Self.night)
        bytes[bytes.count - 1] ^= 0x40
        let error = try #require(throws: GarminError.self) { try FITDecoder.decode(bytes) }
        #expect(error.code == .fitCRCMismatch && error.message.contains("CRC"), "\(error)")
    }

    @Test("a definition cut short is a truncation error naming where, whatever the CRC says")
    func truncatedDefinition() throws {
        // Header, then a definition of 3 fields with only one given; the CRCs are right.
        let data: [UInt8] = [0x40, 0, 0, 0x37, 0x00, 3, 253, 4, 0x86]
        let error = try #require(throws: GarminError.self) { try FITDecoder.decode(Self.file(data)) }
        #expect(error.code == .fitTruncated && error.message.contains("data byte 0"), "\(error)")
    }

    @Test("developer fields are read past, their bytes kept, and the message's own fields right")
    func developerField() throws {
        // Definition with a developer field: monitoring (55), heart_rate uint8; one developer field of 2 bytes.
        let data: [UInt8] = [0x60, 0, 0, 55, 0, 1, 27, 1, 0x02, 1, 7, 2, 0,
                             0x00, 72, 0xAB, 0xCD]
        let message = try #require(try FITDecoder.decode(Self.file(data)).first?.messages.first)
        #expect(message.global == FITGlobal.monitoring && message.unsigned(27) == 72)
        #expect(message.developerFields == [FITDeveloperValue(number: 7, developerIndex: 0, bytes: [0xAB, 0xCD])])
    }

    @Test("a big-endian definition reads its numbers in that order")
    func bigEndian() throws {
        let data: [UInt8] = [0x40, 0, 1, 0, 55, 2, 253, 4, 0x86, 27, 1, 0x02,
                             0x00, 0x12, 0x34, 0x56, 0x78, 90]
        let message = try #require(try FITDecoder.decode(Self.file(data)).first?.messages.first)
        #expect(message.timestamp == 0x1234_5678 && message.unsigned(27) == 90)
    }

    @Test("bad records are clear errors: an undefined local type, a compressed header before any timestamp, a header that is no FIT header")
    func badRecords() throws {
        let undefined = try #require(throws: GarminError.self) { try FITDecoder.decode(Self.file([0x03, 1, 2])) }
        #expect(undefined.code == .fitUndefinedLocalType)
        let compressed = try #require(throws: GarminError.self) {
            try FITDecoder.decode(Self.file([0x40, 0, 0, 55, 0, 1, 27, 1, 0x02, 0x85, 70]))
        }
        #expect(compressed.code == .fitCompressedWithoutTimestamp)
        let notFIT = try #require(throws: GarminError.self) { try FITDecoder.decode(Array("not a FIT file at all".utf8)) }
        #expect(notFIT.code == .fitHeaderInvalid)
        let empty = try #require(throws: GarminError.self) { try FITDecoder.decode([]) }
        #expect(empty.code == .fitHeaderInvalid)
    }

    @Test("two chained files are both read; invalid values read as invalid, z types' zero included")
    func chainedAndInvalid() throws {
        var encoder = FITEncoder()
        try encoder.write(global: FITGlobal.monitoring, [.init(FITField.timestamp, .uint32, .unsigned(1000)), .init(27, .uint8, .invalid),
                                                         .init(3, .uint32z, .invalid), .init(8, .string, .string("hr"))])
        let one = encoder.file()
        let files = try FITDecoder.decode(one + one)
        #expect(files.count == 2)
        let message = try #require(files[1].messages.first)
        #expect(message.fields[27] == .invalid && message.fields[3] == .invalid && message.fields[8] == .string("hr"))
        #expect(FITRecords.heartRateSamples(files[0]).isEmpty, "no heart rate in an invalid one")
    }

    @Test("every prefix of a file is refused or read, never a crash")
    func everyPrefix() throws {
        let bytes = try FITRecords.monitoringFile(Self.samples(every: 60, count: 30), created: Self.night, compressesTimestamps: true)
        for cut in 0..<bytes.count {
            #expect(throws: GarminError.self) { try FITDecoder.decode(Array(bytes[..<cut])) }
        }
    }

    /// `data` records in a file with a right header and CRC.
    static func file(_ data: [UInt8]) -> [UInt8] {
        var header: [UInt8] = [14, 0x20, 0x54, 0x08, UInt8(data.count), 0, 0, 0] + Array(".FIT".utf8)
        let crc = GarminCRC.checksum(header)
        header += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        let body = header + data
        let fileCRC = GarminCRC.checksum(body)
        return body + [UInt8(fileCRC & 0xFF), UInt8(fileCRC >> 8)]
    }
}
