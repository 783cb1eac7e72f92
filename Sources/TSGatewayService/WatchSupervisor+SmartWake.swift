import Foundation
import TSModels
import TSGatewayAPI
import TSStore
import TSWatchService

/// Smart wake from the gateway and the watch's alarm alerts, for the watch one supervisor holds.
extension WatchSupervisor {
    /// While connected to a watch that can ring on command: every ten seconds, and at each live
    /// stage, decides on the alarms with a gateway smart window (`SmartWake`). A ringing is
    /// settled in the store before the watch is asked to ring, so nothing rings twice, even
    /// across a restart; the watch's own alarm is never touched, so without the gateway it
    /// rings at its time.
    func smartWakeLoop() async {
        while !Task.isCancelled {
            await decideSmartWakeLogged()
            do { try await Task.sleep(for: Self.smartWakeInterval) } catch { return }
        }
    }

    /// A watch's `smart-wake:` in the configuration is its whole set of gateway windows: stored
    /// at start, replacing what `SetSmartWake` left. Without it the stored set stands.
    func applyConfiguredSmartWake() async {
        guard let windows = entry.smartWake else { return }
        do {
            try await store.replaceSmartWakeWindows(watch: id, with: windows)
        } catch {
            logger.error("\(id): smart-wake windows not stored: \(error)")
        }
    }

    /// Between stage events: windows begin and alarm times pass.
    static let smartWakeInterval: Duration = .seconds(10)

    func decideSmartWakeLogged() async {
        do {
            try await decideSmartWake(now: Date())
        } catch {
            if Task.isCancelled || error is CancellationError { return }
            logger.warning("\(id): smart wake: \(error)")
        }
    }

    func decideSmartWake(now: Date) async throws {
        let windows = try await store.smartWakeWindows(watch: id)
        guard !windows.isEmpty else { return }
        let wake = SmartWake(windows: windows, timeZone: settings.timeZone)
        guard !wake.occurrences(around: now, alarms: alarmTable).isEmpty else { return }
        let settled = Set(try await store.settledSmartWakes(watch: id, since: now - 86_400).map { SmartWake.Occurrence(slot: $0.slot, time: $0.alarmTime) })
        for decision in wake.decide(now: now, stage: status.sleepStage, alarms: alarmTable, settled: settled, announced: announcedWindows) {
            switch decision {
            case let .windowStarted(occurrence, start):
                announcedWindows.insert(occurrence)
                logger.info("\(id): smart wake window of \(occurrence) began at \(ISO8601DateFormatter().string(from: start))")
                publish(GatewayEvent(.night(NightEvent(.smartPeriod, alarmSlot: occurrence.slot)), watch: id, time: now))
            case let .ring(occurrence, stage):
                guard try await settle(occurrence, .rang, stage: stage) else { continue }
                let result: String
                do {
                    result = try await watch.ring(slot: occurrence.slot, purpose: .smartWake).rawValue
                } catch {
                    // Settled all the same: the watch's own alarm still rings at its time.
                    logger.warning("\(id): smart wake: \(stage.name) sleep inside the window of \(occurrence), but the watch did not ring: \(error)")
                    publish(GatewayEvent(.smartWake(slot: occurrence.slot, alarmTime: occurrence.time, outcome: .leftToWatch, stage: stage), watch: id, time: now))
                    continue
                }
                logger.notice("\(id): smart wake: \(stage.name) sleep inside the window of \(occurrence); the watch rings (\(result))")
                publish(GatewayEvent(.smartWake(slot: occurrence.slot, alarmTime: occurrence.time, outcome: .rang, stage: stage), watch: id, time: now))
            case let .leftToWatch(occurrence):
                guard try await settle(occurrence, .leftToWatch, stage: nil) else { continue }
                logger.info("\(id): smart wake: no light or awake stage inside the window of \(occurrence); the watch's alarm rang at its time")
                publish(GatewayEvent(.smartWake(slot: occurrence.slot, alarmTime: occurrence.time, outcome: .leftToWatch, stage: nil), watch: id, time: now))
            }
        }
    }

    /// A decision once taken is stored whatever cancels the task taking it; false: it was
    /// settled before.
    private func settle(_ occurrence: SmartWake.Occurrence, _ outcome: SmartWakeOutcome, stage: SleepStage?) async throws -> Bool {
        try await shieldedFromCancellation { [store, id] in
            try await store.settleSmartWake(watch: id, slot: occurrence.slot, alarmTime: occurrence.time, outcome: outcome, stage: stage)
        }
    }

    /// The watch reports an alarm ringing, dismissed or snoozed: the night's alarm events.
    func alarmAlerted(_ alert: AlarmAlertNotice) {
        let name: NightEvent.Name = switch alert.kind {
        case .ringing: .alarmAlertStart
        case .dismissed, .timedOut: .alarmAlertDismiss
        case .snoozed: .alarmSnoozeClicked
        }
        publish(GatewayEvent(.night(NightEvent(name, alarmSlot: alert.slot)), watch: id, time: Date(timeIntervalSince1970: TimeInterval(alert.time))))
    }

    /// Sets the gateway's smart window of an alarm slot (0 removes it).
    public func setSmartWakeWindow(slot: Int, minutes: Int) async throws {
        try await store.setSmartWakeWindow(watch: id, slot: slot, minutes: minutes)
    }

    public func smartWakeWindows() async throws -> [Int: Int] { try await store.smartWakeWindows(watch: id) }
}
