import Foundation
import TSProtocol
import TSModels

/// Plays a night of live stage events on an in-process simulated watch while the daemon is
/// connected: fell asleep, a few cycles, woke up, a pause, and again. The script's position
/// survives a dropped link, so a reconnect resumes the same night.
public actor SimulatedNight {
    public let simulator: SimulatedWatch
    let interval: Duration?
    private var position = 0
    private var played = false

    static let script: [(LiveStageKind, SleepStage)] = [
        (.fellAsleep, .light), (.stageChanged, .deep), (.stageChanged, .light), (.stageChanged, .rem),
        (.stageChanged, .light), (.stageChanged, .deep), (.stageChanged, .rem), (.wokeUp, .awake),
    ]

    public init(simulator: SimulatedWatch, interval: Duration?) {
        self.simulator = simulator
        self.interval = interval
    }

    /// Until cancelled; returns at once when the watch has no live night to play.
    public func play() async {
        guard let interval else { return }
        while !Task.isCancelled {
            // A pause of three steps between nights.
            let pause = position == 0 && played ? interval * 3 : interval
            played = true
            do { try await Task.sleep(for: pause) } catch { return }
            let (kind, stage) = Self.script[position]
            await simulator.reportLiveStage(LiveStageEvent(kind: kind, stage: stage, time: UInt32(clamping: Int64(Date().timeIntervalSince1970))))
            position = (position + 1) % Self.script.count
        }
    }
}
