import Foundation
import Testing
import TSGarmin
import TSModels

/// FIT files between Garmin's own FIT SDK and the project's codec (scripts/garmin/fit_sdk_files.py):
/// the files in protocol-spec/garmin/vectors/sdk/ were written by Garmin's Encoder, bytes nobody
/// here made, and read here; the ones in ours/ are what the simulated watch's encoder writes, and
/// Garmin's Decoder reads them (`scripts/garmin/python scripts/garmin/fit_sdk_files.py --check`,
/// run by scripts/test). TSGATEWAY_WRITE_FIT_EXAMPLES=1 writes ours/ anew.
@Suite struct FITSDKTests {
    static let vectors = GarminVectors.directory

    struct Expected: Codable, Equatable {
        var sleepItems: [[Value]]
        var heartRate: [[Int64]]

        enum Value: Codable, Equatable {
            case text(String)
            case number(Int64)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Int64.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case let .text(text): try container.encode(text)
                case let .number(number): try container.encode(number)
                }
            }
        }

        /// A settings file's alarm_settings (222) as written: minutes after midnight, days, enabled; nil: none.
        var alarms: [[Int64]]?

        init(items: [SleepItem], samples: [HeartRateSample], alarms: [[Int64]] = []) {
            sleepItems = items.map { [.text($0.stage.name), .number($0.start), .number($0.duration)] }
            heartRate = samples.map { [Int64($0.time.timeIntervalSince1970), Int64($0.bpm)] }
            self.alarms = alarms.isEmpty ? nil : alarms
        }
    }

    static func read(_ bytes: [UInt8]) throws -> Expected {
        let files = try FITDecoder.decode(bytes)
        let alarms = files.flatMap(\.messages).filter { $0.global == FITGlobal.alarmSettings }.map { message in
            [0, 1, 2].map { Int64(message.unsigned($0) ?? 0) }
        }
        return Expected(items: files.flatMap(FITRecords.sleepItems), samples: files.flatMap(FITRecords.heartRateSamples), alarms: alarms)
    }

    @Test("the files Garmin's Encoder wrote read as the SDK's side says: sleep levels, monitoring across timestamp_16's rollover")
    func sdkFilesRead() throws {
        let expected = try JSONDecoder().decode([String: Expected].self, from: Data(contentsOf: Self.vectors.appendingPathComponent("sdk/expected.json")))
        #expect(Set(expected.keys) == ["sleep.fit", "monitoring.fit"])
        for (name, wanted) in expected {
            let bytes = try [UInt8](Data(contentsOf: Self.vectors.appendingPathComponent("sdk/\(name)")))
            #expect(try Self.read(bytes) == wanted, "\(name)")
        }
    }

    /// Two nights and 30 hours of heart rate every 10 minutes, as the simulated watch would serve them.
    static func ours() throws -> [String: ([UInt8], Expected)] {
        let night = FITTests.night
        let items = FITTests.items + FITTests.items.map { SleepItem(stage: $0.stage, start: $0.start + 86_400, duration: $0.duration) }
        let samples = FITTests.samples(every: 600, count: 180)
        return [
            "sleep.fit": (try FITRecords.sleepFile(items, created: night), Expected(items: items, samples: [])),
            "monitoring.fit": (try FITRecords.monitoringFile(samples, created: night), Expected(items: [], samples: samples)),
            // The settings file `alarms set` uploads (§10): 06:45 Mon–Fri, 09:30 Sat–Sun off, 22:00 once.
            "alarms.fit": (try GarminAlarmFile.file(GarminAlarmFileTests.table, created: try #require(GarminTime.garmin(night))),
                           Expected(items: [], samples: [], alarms: [[405, 0x1F, 1], [570, 0x60, 0], [1320, 128, 1]])),
        ]
    }

    @Test("the simulated watch's files in ours/ are what its encoder writes today, and read back as written")
    func oursAreCurrent() throws {
        let directory = Self.vectors.appendingPathComponent("ours")
        let files = try Self.ours()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        if ProcessInfo.processInfo.environment["TSGATEWAY_WRITE_FIT_EXAMPLES"] == "1" {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, (bytes, _)) in files { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
            try encoder.encode(files.mapValues(\.1)).write(to: directory.appendingPathComponent("expected.json"))
        }
        for (name, (bytes, expected)) in files {
            #expect(try [UInt8](Data(contentsOf: directory.appendingPathComponent(name))) == bytes, "ours/\(name) is not what the encoder writes")
            #expect(try Self.read(bytes) == expected)
        }
        let committed = try JSONDecoder().decode([String: Expected].self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
        #expect(committed == files.mapValues(\.1))
    }
}
