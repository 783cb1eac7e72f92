import Foundation
import TSProtocol
import TSModels

/// Plays a night of live stage events on an in-process simulated watch while the daemon is
/// connected: fell asleep, a few cycles, woke up, a pause, and again; its heart (the standard
/// Heart Rate service, when it has one) beats at the rate of the current stage, and its alarm
/// clock runs on the wall clock (alarms ring, smart windows follow the played stages). The
/// script's position survives a dropped link, so a reconnect resumes the same night.
public actor SimulatedNight {
    public let simulator: SimulatedWatch
    public let standard: SimulatedStandardServices?
    let interval: Duration?
    let heartRateInterval: Duration
    private var position = 0
    private var played = false

    static let script: [(LiveStageKind, SleepStage)] = [
        (.fellAsleep, .light), (.stageChanged, .deep), (.stageChanged, .light), (.stageChanged, .rem),
        (.stageChanged, .light), (.stageChanged, .deep), (.stageChanged, .rem), (.wokeUp, .awake),
    ]

    public init(simulator: SimulatedWatch, interval: Duration?, standard: SimulatedStandardServices? = nil, heartRateInterval: Duration = .seconds(1)) {
        self.simulator = simulator
        self.interval = interval
        self.standard = standard
        self.heartRateInterval = heartRateInterval
    }

    /// Until cancelled: the alarm clock runs, the heart beats and the live night plays.
    public func play() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [simulator] in await simulator.runAlarmClock() }
            if let standard {
                group.addTask { [heartRateInterval] in await standard.beat(every: heartRateInterval) }
            }
            group.addTask { await self.playStages() }
            await group.waitForAll()
        }
    }

    private func playStages() async {
        guard let interval else { return }
        while !Task.isCancelled {
            // A pause of three steps between nights.
            let pause = position == 0 && played ? interval * 3 : interval
            played = true
            do { try await Task.sleep(for: pause) } catch { return }
            let (kind, stage) = Self.script[position]
            await standard?.setStage(stage)
            await simulator.reportLiveStage(LiveStageEvent(kind: kind, stage: stage, time: UInt32(clamping: Int64(Date().timeIntervalSince1970))))
            position = (position + 1) % Self.script.count
        }
    }
}
