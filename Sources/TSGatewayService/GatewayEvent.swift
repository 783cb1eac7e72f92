import Foundation
import TSModels
import TSStore

/// Something that happened to a watch the daemon serves. `tsgateway events` prints these as
/// JSON lines; the D-Bus service sends each as a typed signal and as Gateway1.Event(json).
public struct GatewayEvent: Sendable, Codable, Hashable {
    public enum Kind: String, Sendable, Codable, Hashable, CaseIterable {
        /// `connected` says which way; `reason` why a link ended or a connect failed.
        case connection
        case alarmsChanged
        case sleepSynced
        case battery
        /// A live stage event from the watch (`stage`, `liveKind`).
        case liveStage
        case fellAsleep
        case wokeUp
        /// A live session changed state: `session` holds it, `change` says how.
        case session
    }

    public var type: Kind
    public var watch: String
    public var time: Date
    public var connected: Bool?
    public var reason: String?
    public var alarms: [Alarm]?
    public var origin: String?
    public var fetched: Int?
    public var stored: Int?
    public var battery: Int?
    public var stage: SleepStage?
    public var liveKind: String?
    /// opened, interrupted, resumed, closed, completed, unexpectedEnd
    public var change: String?
    public var session: LiveSleepSession?

    public init(_ type: Kind, watch: String, time: Date = Date()) {
        self.type = type
        self.watch = watch
        self.time = time
    }

    public func json() -> String { (try? GatewayBusAPI.json(self)) ?? "{}" }

    public static func decode(json: String) throws -> GatewayEvent { try GatewayBusAPI.decode(GatewayEvent.self, json: json) }
}

/// What the daemon knows of one watch right now; read by D-Bus property getters from any thread.
public struct WatchStatus: Sendable, Codable, Hashable {
    public var id: String
    public var name: String?
    public var simulated: Bool
    public var connected = false
    public var batteryLevel: Int?
    public var batteryState: BatteryState?
    public var lastSync: Date?
    public var info: DeviceInfo?
    public var lastError: String?
    public var syncing = false
    /// The live session: "" (none yet), open, interrupted, closed or complete.
    public var sessionState = ""

    public init(id: String, name: String?, simulated: Bool) {
        self.id = id
        self.name = name
        self.simulated = simulated
    }
}

extension WatchStatus {
    public static func sessionState(_ session: LiveSleepSession?) -> String {
        guard let session else { return "" }
        return session.state == .open && session.interrupted ? "interrupted" : session.state.rawValue
    }
}
