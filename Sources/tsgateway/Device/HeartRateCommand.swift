import ArgumentParser
import Foundation
import TSGatewayService
import TSModels

struct HeartRateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr", abstract: "Heart rate from the watch's standard Heart Rate service.", subcommands: [Watch.self])

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
            try await WatchAccessor.run(connection) { watch in
                var seen = 0
                for try await sample in try await watch.heartRate() {
                    if json {
                        print(GatewayEvent(.heartRate(sample), watch: watch.watchId, time: sample.time).json())
                    } else {
                        var text = "\(sample.time.formatted(date: .omitted, time: .standard))  \(sample.bpm) bpm"
                        switch sample.sensorContact {
                        case .detected: text += ", contact"
                        case .notDetected: text += ", no skin contact"
                        case .notSupported: break
                        }
                        if let energy = sample.energyExpended { text += ", \(energy) kJ" }
                        if !sample.rrIntervals.isEmpty {
                            text += ", RR " + sample.rrIntervals.map { "\(Int((Double($0) * 1000 / 1024).rounded())) ms" }.joined(separator: " ")
                        }
                        print(text)
                    }
                    fflush(nil)
                    seen += 1
                    if let count, seen >= count { break }
                }
            }
        }
    }
}
