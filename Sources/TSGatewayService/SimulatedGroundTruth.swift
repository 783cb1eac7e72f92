import Foundation
import Logging
import TSFiles
import TSModels
import TSSimulator

/// `ground-truth: FILE` on a simulated watch: once the daemon has stopped, what the watch held
/// and what was done on it, as JSON (0600), so that a check outside the process (scripts/soak)
/// can compare the store with it: `{"watch", "records": [SleepItem], "watchSideEdits":
/// [{"origin", "alarms", "acknowledged"}], "sleepAcknowledgements": [{"start", "end", "count", "at"}]}`. The daemon's simulated watches delete no synced
/// record, so `records` is everything they were made with. While the daemon runs, settled wrist
/// edits wait in `FILE.edits` (`WatchSideEditJournal`), not in the daemon's memory.
enum SimulatedGroundTruth {
    static func journalPath(_ path: String) -> String { path + ".edits" }

    static func write(for supervisors: [WatchSupervisor], logger: Logger) async {
        for supervisor in supervisors {
            guard let path = supervisor.entry.groundTruth, let night = supervisor.simulated else { continue }
            let simulator = await night.simulator
            do {
                let encoder = JSONCoding.recordEncoder()
                // Assembled from parts: the edits are JSON objects already (from the journal and memory).
                var data = Data(#"{"records":"#.utf8)
                data += try encoder.encode(await simulator.state.records)
                data += Data(#","watch":"#.utf8) + (try encoder.encode(supervisor.id))
                data += Data(#","watchSideEdits":["#.utf8)
                data += Data(try await simulator.allWatchSideEdits().joined(separator: Data(",".utf8)))
                data += Data(#"],"sleepAcknowledgements":"#.utf8)
                encoder.dateEncodingStrategy = .iso8601
                data += try encoder.encode(await simulator.acknowledgements)
                data += Data("}".utf8)
                try PrivateFile.write(data, to: path)
                try? FileManager.default.removeItem(atPath: journalPath(path))
            } catch {
                logger.error("\(supervisor.id): ground truth not written to \(path): \(error)")
            }
        }
    }
}
