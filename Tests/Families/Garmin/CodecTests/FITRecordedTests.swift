import Foundation
import Testing
import TSGarmin

/// FIT files recorded by devices (protocol-spec/garmin/vectors/recorded/, from python-fitparse's
/// test fixtures: a vivofit, a Forerunner 70, a fenix 5, SOURCES.md), bytes nobody here made, read
/// with the project's decoder and checked against what python-fitparse reads from them
/// (`scripts/garmin/python scripts/garmin/fit_recorded_files.py --check`, run by scripts/test):
/// every data message by global number, the monitoring records' times across timestamp_16's
/// rollover, the heart rates of records timed by compressed-timestamp headers, developer fields,
/// and a clear error for a truncated file and for a corrupt chained header.
@Suite struct FITRecordedTests {
    static let directory = GarminVectors.directory.appendingPathComponent("recorded")

    struct Expected: Decodable {
        var readable: Bool
        var messages: [String: Int]?
        var monitoringTimes: [UInt32]?
        var recordHeartRates: [[UInt64]]?
    }

    static func expected() throws -> [String: Expected] {
        try JSONDecoder().decode([String: Expected].self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
    }

    @Test("every recorded file python-fitparse reads, the decoder reads message for message")
    func readableFilesReadAsFitparseReadsThem() throws {
        let expected = try Self.expected()
        let readable = expected.filter(\.value.readable)
        #expect(readable.count == 5)
        for (name, wanted) in readable {
            let files = try FITDecoder.decode(Self.bytes(name))
            let messages = files.flatMap(\.messages)
            let counts = Dictionary(grouping: messages) { String($0.global) }.mapValues(\.count)
            #expect(counts == wanted.messages, "\(name)")
            let monitoring = files.flatMap(FITRecords.monitoringRecords).map(\.time)
            #expect(monitoring == wanted.monitoringTimes ?? [], "\(name)")
            let heartRates = messages.filter { $0.global == 20 }.compactMap { message -> [UInt64]? in
                guard let time = message.timestamp, let bpm = message.unsigned(3) else { return nil }
                return [UInt64(time), bpm]
            }
            #expect(heartRates == wanted.recordHeartRates ?? [], "\(name)")
        }
    }

    @Test("a vivofit's monitoring file: 337 records whose timestamp_16 crosses a 65536-second boundary")
    func theMonitoringFileCrossesTimestamp16sRollover() throws {
        let files = try FITDecoder.decode(Self.bytes("MonitoringFile.fit"))
        #expect(files.first?.fileType == 32 || files.first?.fileType == 15, "monitoring (15 monitoring_a, 32 monitoring_b)")
        let times = files.flatMap(FITRecords.monitoringRecords).map(\.time)
        #expect(times.count == 337)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "times only go forward")
        #expect(Set(times.map { $0 >> 16 }).count == 2, "the records cross a rollover of timestamp_16")
    }

    @Test("a Forerunner 70's records, timed by compressed-timestamp headers, which Garmin's Python decoder refuses")
    func compressedTimestampHeadersGiveEveryRecordItsTime() throws {
        for name in ["compressed-speed-distance.fit", "antfs-dump.63.fit"] {
            let records = try FITDecoder.decode(Self.bytes(name)).flatMap(\.messages).filter { $0.global == 20 }
            #expect(records.count > 600, "\(name)")
            #expect(records.allSatisfy { $0.timestamp != nil }, "\(name)")
        }
    }

    @Test("developer fields are kept as the file gave them")
    func developerFieldsAreKept() throws {
        let records = try FITDecoder.decode(Self.bytes("DeveloperData.fit")).flatMap(\.messages).filter { $0.global == 20 }
        #expect(records.count == 3)
        #expect(records.allSatisfy { !$0.developerFields.isEmpty })
    }

    @Test("a truncated file and a corrupt chained header are clear errors, as python-fitparse finds them")
    func damagedFilesAreClearErrors() throws {
        let unreadable = try Self.expected().filter { !$0.value.readable }.keys.sorted()
        #expect(unreadable == ["activity-settings-corruptheader.fit", "activity-unexpected-eof.fit"])
        for name in unreadable {
            let bytes = try Self.bytes(name)
            let error = #expect(throws: GarminError.self, "\(name)") { try FITDecoder.decode(bytes) }
            #expect(error?.message.isEmpty == false, "\(name): \(String(describing: error))")
        }
    }
}
