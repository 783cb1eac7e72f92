import Foundation
import TSDevice
import TSModels
import TSProtocol

/// Protocol v1 as one dialect behind the seam: v1's messages in TSModels types.
extension Watch: WatchCentral {
    public nonisolated var dialect: Dialect { .protocolV1 }

    public nonisolated func events() -> AsyncStream<WatchEvent> { watchEvents.subscribe() }

    public var linkMTU: Int? { connection?.mtu.value }

    public var capabilities: WatchCapabilities { info?.capabilities ?? .nothing }

    public func ring(slot: Int, purpose: RingPurpose) async throws -> RingOutcome {
        let reason: RingReason = switch purpose {
        case .smartWake: .smartWake
        case .test: .test
        }
        return switch try await ring(slot: UInt8(clamping: slot), reason: reason) {
        case .ringing: .ringing
        case .alreadyRinging: .alreadyRinging
        case .alreadyRang: .alreadyRang
        }
    }

    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        let (header, pages) = try await sleepPages(start: UInt32(clamping: start), end: end.map { UInt32(clamping: $0) })
        let parts = AsyncThrowingStream<[SleepItem], any Error> { continuation in
            let task = Task {
                do {
                    for try await page in pages { continuation.yield(page.records) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SleepRecordTransfer(total: Int(header.total), parts: parts)
    }

    public func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int {
        try await commitSleep(start: UInt32(clamping: start), end: UInt32(clamping: end), count: count)
    }
}

extension AlarmTableChange {
    /// ALARMS_CHANGED in TSModels words.
    init(_ change: AlarmsChanged) {
        let origin: AlarmTableOrigin = switch change.origin {
        case .watch: .watch
        case .otherCentral: .app
        case .onceAlarmFired: .onceAlarmFired
        }
        self.init(alarms: change.alarms, origin: origin)
    }
}

extension LiveStage {
    /// LIVE_STAGE in TSModels words.
    init(_ event: LiveStageEvent) {
        let change: Change = switch event.kind {
        case .fellAsleep: .fellAsleep
        case .stageChanged: .stageChanged
        case .wokeUp: .wokeUp
        }
        self.init(time: Int64(event.time), stage: event.stage, change: change)
    }
}

extension AlarmAlertNotice {
    /// ALARM_ALERT in TSModels words.
    init(_ alert: AlarmAlert) {
        let kind: Kind = switch alert.kind {
        case .ringing: .ringing
        case .dismissed: .dismissed
        case .snoozed: .snoozed
        case .timedOut: .timedOut
        }
        self.init(slot: Int(alert.slot), time: Int64(alert.time), kind: kind)
    }
}
extension Watch: LinkedCentral {}
