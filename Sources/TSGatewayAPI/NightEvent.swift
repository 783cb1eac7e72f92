import Foundation
import TSModels

/// What happens in a night, in one vocabulary for the `Night` D-Bus signal, `tsgateway events`
/// (`"type": "night"`), the MQTT topic `…/event/night` and Home Assistant's "Night" event entity.
/// The names are Sleep as Android's event names where one fits (`sleep_tracking_started`,
/// `light_sleep`, `smart_period`, `alarm_alert_start`, …), so automations written for it read
/// the same; `fell_asleep`, `woke_up` and `not_worn` have no counterpart there.
public struct NightEvent: Sendable, Hashable, Codable {
    public enum Name: String, Sendable, Hashable, Codable, CaseIterable {
        /// The live session opened: the wearer fell asleep with the gateway connected.
        case sleepTrackingStarted = "sleep_tracking_started"
        /// The link dropped during the session.
        case sleepTrackingPaused = "sleep_tracking_paused"
        /// A stage event came again after a pause.
        case sleepTrackingResumed = "sleep_tracking_resumed"
        /// The session ended: the wake-up, or a gateway that died found the session on its restart.
        case sleepTrackingStopped = "sleep_tracking_stopped"
        case fellAsleep = "fell_asleep"
        case wokeUp = "woke_up"
        /// Sleep phases, as the watch reports its stage changes.
        case awake
        case lightSleep = "light_sleep"
        case deepSleep = "deep_sleep"
        case rem
        /// An alarm's smart wake window began.
        case smartPeriod = "smart_period"
        /// An alarm started ringing, was dismissed, was snoozed (reported by the watch).
        case alarmAlertStart = "alarm_alert_start"
        case alarmAlertDismiss = "alarm_alert_dismiss"
        case alarmSnoozeClicked = "alarm_snooze_clicked"
        /// The watch reports it is not being worn.
        case notWorn = "not_worn"

        /// The phase event of a stage.
        public init(phase stage: SleepStage) {
            self = switch stage {
            case .awake: .awake
            case .light: .lightSleep
            case .deep: .deepSleep
            case .rem: .rem
            }
        }
    }

    public var name: Name
    /// The stage, for the phase events, `fell_asleep` and `woke_up`.
    public var stage: SleepStage?
    /// The alarm's slot, for `smart_period` and the alarm events.
    public var alarmSlot: Int?

    public init(_ name: Name, stage: SleepStage? = nil, alarmSlot: Int? = nil) {
        self.name = name
        self.stage = stage
        self.alarmSlot = alarmSlot
    }

    /// The night events an event of the gateway stands for, in order (none for most).
    public static func derived(from event: GatewayEvent) -> [NightEvent] {
        switch event.kind {
        case let .liveStage(stage, kind):
            switch kind {
            case .fellAsleep: return [NightEvent(.fellAsleep, stage: stage), NightEvent(Name(phase: stage), stage: stage)]
            case .stageChanged: return [NightEvent(Name(phase: stage), stage: stage)]
            case .wokeUp: return [NightEvent(.wokeUp, stage: stage)]
            }
        case let .session(change, _, _):
            switch change {
            case .opened: return [NightEvent(.sleepTrackingStarted)]
            case .interrupted: return [NightEvent(.sleepTrackingPaused)]
            case .resumed: return [NightEvent(.sleepTrackingResumed)]
            case .closed, .unexpectedEnd: return [NightEvent(.sleepTrackingStopped)]
            case .completed: return []
            }
        default:
            return []
        }
    }
}
