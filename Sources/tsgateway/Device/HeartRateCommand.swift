import ArgumentParser
import Foundation
import TSGatewayAPI
import TSModels

struct HeartRateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr", abstract: "Heart rate from the watch's standard Heart Rate service: live, or as stored.", subcommands: [Watch.self, History.self])

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print live heart rate until Ctrl-C (or --count samples); exit status 79 when the watch has no Heart Rate service.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "Stop after this many samples.")
        var count: Int?
        @Flag(help: #"Print one JSON object a line, as `tsgateway events` does: {"type":"heartRate","watch","time","bpm","sensorContact","energyExpended"?,"rrIntervals"} (RR in 1/1024 s)."#)
        var json = false

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        }

        func run() async throws {
            let encoder = HeartRateLine.encoder()
            try await WatchAccessor.run(connection) { watch in
                var seen = 0
                for try await sample in try await watch.heartRateSamples() {
                    let line = HeartRateLine(watch: watch.watchId, sample: sample)
                    print(json ? try line.json(encoder) : line.text(time: sample.time.formatted(date: .omitted, time: .standard)))
                    fflush(nil)
                    seen += 1
                    if let count, seen >= count { break }
                }
            }
        }
    }
}

/// One heart-rate sample as `hr watch` and `hr history` print it: a JSON line
/// `{"type": "heartRate", "watch", "time", "bpm", "sensorContact", "energyExpended"?, "rrIntervals"}`: the
/// `heartRate` event of `tsgateway events`, one JSON shape for a sample everywhere
/// or a line of text.
struct HeartRateLine: Encodable {
    var type = "heartRate"
    var watch: WatchID
    var time: Date
    var bpm: Int
    var sensorContact: SensorContact
    var energyExpended: Int?
    /// 1/1024 s.
    var rrIntervals: [Int]

    init(watch: WatchID, sample: HeartRateSample) {
        self.watch = watch
        time = sample.time
        bpm = sample.bpm
        sensorContact = sample.sensorContact
        energyExpended = sample.energyExpended
        rrIntervals = sample.rrIntervals
    }

    static func encoder() -> JSONEncoder { JSONCoding.encoder(iso8601Dates: true) }

    func json(_ encoder: JSONEncoder) throws -> String {
        GatewayEvent(.heartRate(HeartRateSample(time: time, bpm: bpm, sensorContact: sensorContact, energyExpended: energyExpended, rrIntervals: rrIntervals)),
                     watch: watch, time: time).json()
    }

    /// `TIME  57 bpm, contact, 12 kJ, RR 812 ms 790 ms` with the time written as given.
    func text(time: String) -> String {
        var text = "\(time)  \(bpm) bpm"
        switch sensorContact {
        case .detected: text += ", contact"
        case .notDetected: text += ", no skin contact"
        case .notSupported: break
        }
        if let energyExpended { text += ", \(energyExpended) kJ" }
        if !rrIntervals.isEmpty {
            text += ", RR " + rrIntervals.map { "\(Int((Double($0) * 1000 / 1024).rounded())) ms" }.joined(separator: " ")
        }
        return text
    }
}
