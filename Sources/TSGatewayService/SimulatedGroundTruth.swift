import Foundation
import Logging
import TSModels
import TSSimulator

/// `ground-truth: FILE` on a simulated watch: once the daemon has stopped, what the watch held
/// and what was done on it, as JSON (0600), so that a check outside the process (scripts/soak)
/// can compare the store with it: `{"watch", "records": [SleepItem], "watchSideEdits":
/// [{"origin", "alarms", "acknowledged"}]}`. The daemon's simulated watches delete no synced
/// record, so `records` is everything they were made with.
struct SimulatedGroundTruth: Encodable {
    var watch: String
    var records: [SleepItem]
    var watchSideEdits: [WatchSideEdit]

    static func write(for supervisors: [WatchSupervisor], logger: Logger) async {
        for supervisor in supervisors {
            guard let path = supervisor.entry.groundTruth, let night = supervisor.simulated else { continue }
            let simulator = await night.simulator
            let truth = SimulatedGroundTruth(watch: supervisor.id, records: await simulator.state.records,
                                             watchSideEdits: await simulator.watchSideEdits)
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let data = try encoder.encode(truth)
                guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
            } catch {
                logger.error("\(supervisor.id): ground truth not written to \(path): \(error)")
            }
        }
    }
}
