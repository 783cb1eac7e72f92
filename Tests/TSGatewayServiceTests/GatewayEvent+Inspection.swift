@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSStore

/// The associated values of an event, for assertions.
extension GatewayEvent {
    var alarmOrigin: AlarmTableOrigin? { if case let .alarmsChanged(_, origin) = kind { origin } else { nil } }
    var sessionChange: SessionChange? { if case let .session(change, _, _) = kind { change } else { nil } }
    var connected: Bool? { if case let .connection(connected, _) = kind { connected } else { nil } }
    var reason: String? { if case let .connection(_, reason) = kind { reason } else { nil } }
    var session: LiveSleepSession? {
        switch kind {
        case let .session(_, session, _), let .fellAsleep(session), let .wokeUp(session): session
        default: nil
        }
    }
}
