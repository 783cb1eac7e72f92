import ArgumentParser
import Foundation
import TSFiles
import TSModels
import TSSleep
import TSStore
import TSWatchService

struct SleepExportCommand: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv, healthkit }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export synced sleep records as JSON, CSV or HealthKit-style samples.",
        discussion: """
            json: {"watch", "records": [{"stage", "start", "duration"}]} (Unix seconds). csv: a \
            header start,end,stage,duration with ISO 8601 local times. healthkit: {"watch", \
            "samples": [{"value", "start", "end"}]} with inBed/awake/core/deep/rem per segment. \
            Files are created readable by their owner only (health data).

            Examples:
              tsgateway sleep export --format csv --out week.csv --last 7d
              tsgateway sleep export --format healthkit --from 2026-11-01 --to 2026-11-07
            """)
    @Option(help: "json, csv or healthkit.")
    var format: Format = .json
    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var out: String?
    @Flag(help: "Overwrite --out if it exists.")
    var force = false
    @Option(help: ArgumentHelp("How far back, e.g. 30d (default 30d).", valueName: "age"))
    var last: String?
    @Option(help: ArgumentHelp("First day (YYYY-MM-DD).", valueName: "date"))
    var from: String?
    @Option(help: ArgumentHelp("Last day, inclusive (YYYY-MM-DD).", valueName: "date"))
    var to: String?
    @OptionGroup var source: StoredWatchOptions

    func validate() throws {
        if last != nil && from != nil { throw ValidationError("give --last or --from, not both") }
        if to != nil && from == nil { throw ValidationError("--to needs --from") }
    }

    func run() async throws {
        let now = Date()
        let start = try from.map { try DateArgument.day($0, flag: "--from") } ?? now.addingTimeInterval(-(try DateArgument.age(last ?? "30d", flag: "--last")))
        let end = try to.map { try DateArgument.day($0, flag: "--to").addingTimeInterval(86_400) } ?? now.addingTimeInterval(86_400)
        if let out, FileManager.default.fileExists(atPath: out), !force {
            throw CLIFailure("\(out) exists; add --force to overwrite it", status: .ioError)
        }
        let (store, watchId) = try await source.open()
        let records = try await store.sleepRecords(watch: watchId, start: Int64(start.timeIntervalSince1970), end: Int64(end.timeIntervalSince1970))
        let data: Data
        switch format {
        case .json:
            struct Output: Encodable { var watch: WatchID; var records: [SleepItem] }
            data = try Self.encode(Output(watch: watchId, records: records))
        case .csv:
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = .current
            var text = "start,end,stage,duration\n"
            for record in records {
                text += "\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(record.start)))),"
                    + "\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(record.end)))),\(record.stage.name),\(record.duration)\n"
            }
            data = Data(text.utf8)
        case .healthkit:
            let rule = WatchPolicy().rule(asked: nil, watch: try await store.watches().first { $0.id == watchId }?.info?.capabilities)
            let samples = SleepProcessor.process(records, rule: rule, timeZone: .current)
                .flatMap { $0.nightSleeps + $0.daytimeSleeps }.flatMap(\.healthKitSamples)
            struct Output: Encodable { var watch: WatchID; var samples: [HealthKitSleepSample] }
            data = try Self.encode(Output(watch: watchId, samples: samples))
        }
        guard let out else {
            FileHandle.standardOutput.write(data)
            return
        }
        do { try PrivateFile.write(data, to: out) } catch { throw CLIFailure.from(error) }
        FileHandle.standardError.write(Data("exported \(records.count) records to \(out)\n".utf8))
    }

    private static func encode<T: Encodable>(_ value: T) throws -> Data {
        return try JSONCoding.encoder(pretty: true).encode(value) + Data("\n".utf8)
    }
}
