import Foundation
import TSModels
import TSStore

/// Something that happened to a watch the daemon serves. `tsgateway events` prints these as
/// JSON lines, `{"type", "watch", "time", …}` with the fields of each kind (protocol-spec/dbus-api.md);
/// the D-Bus service sends each as a typed signal and as Gateway2.Event(json).
public struct GatewayEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The link came up, or ended / a connect failed (`reason`).
        case connection(connected: Bool, reason: String?)
        case alarmsChanged(alarms: [Alarm], origin: AlarmTableOrigin)
        case sleepSynced(fetched: Int, stored: Int)
        case battery(level: Int)
        /// A Heart Rate Measurement from the watch's standard Heart Rate service (its time is the event's).
        case heartRate(HeartRateSample)
        /// A live stage event from the watch.
        case liveStage(stage: SleepStage, kind: LiveStage.Change)
        case fellAsleep(session: LiveSleepSession)
        case wokeUp(session: LiveSleepSession)
        /// A live session changed state.
        case session(change: SessionChange, session: LiveSleepSession, reason: String?)
        /// The night in its event vocabulary (`NightEvent`), beside the events it comes from.
        case night(NightEvent)
        /// The gateway settled a ringing of an alarm with a gateway smart window: it made the
        /// watch ring at `stage`, or left the ring to the watch's alarm at its time.
        case smartWake(slot: Int, alarmTime: Date, outcome: SmartWakeOutcome, stage: SleepStage?)
        /// The gateway does not trust the system clock (`reason`), so it holds the watch's clock
        /// and its scheduled syncs; once per such spell. Then `trusted`: it sets them again.
        case clock(trusted: Bool, reason: String?)
        /// The disk holding the gateway's database refused a write (`condition`: full or
        /// read-only; `reason` says what to do), once per such spell: nothing is acknowledged to
        /// the watch meanwhile. Then `condition` nil: it takes writes again.
        case storage(condition: StorageCondition?, reason: String?)
    }

    /// How a live session changed.
    public enum SessionChange: String, Sendable, Hashable, Codable, CaseIterable {
        case opened, interrupted, resumed, closed, completed, unexpectedEnd
    }

    /// The kinds by the name `type` has in JSON (and `tsgateway events --type`).
    public enum KindName: String, Sendable, Hashable, Codable, CaseIterable {
        case connection, alarmsChanged, sleepSynced, battery, heartRate, liveStage, fellAsleep, wokeUp, session, night, smartWake, clock, storage
    }

    public var watch: WatchID
    public var time: Date
    public var kind: Kind

    public init(_ kind: Kind, watch: WatchID, time: Date = Date()) {
        self.kind = kind
        self.watch = watch
        self.time = time
    }

    public var type: KindName {
        switch kind {
        case .connection: .connection
        case .alarmsChanged: .alarmsChanged
        case .sleepSynced: .sleepSynced
        case .battery: .battery
        case .heartRate: .heartRate
        case .liveStage: .liveStage
        case .fellAsleep: .fellAsleep
        case .wokeUp: .wokeUp
        case .session: .session
        case .night: .night
        case .smartWake: .smartWake
        case .clock: .clock
        case .storage: .storage
        }
    }

    public func json() -> String { (try? GatewayBusAPI.json(self)) ?? "{}" }

    public static func decode(json: String) throws -> GatewayEvent { try GatewayBusAPI.decode(GatewayEvent.self, json: json) }
}

extension GatewayEvent: Codable {
    enum CodingKeys: String, CodingKey {
        case type, watch, time, connected, reason, alarms, origin, fetched, stored, battery, stage, liveKind, change, session
        case bpm, sensorContact, energyExpended, rrIntervals
        case event, alarmSlot, alarmTime, outcome
        case trusted
        case writable, condition
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(watch, forKey: .watch)
        try container.encode(time, forKey: .time)
        switch kind {
        case let .connection(connected, reason):
            try container.encode(connected, forKey: .connected)
            try container.encodeIfPresent(reason, forKey: .reason)
        case let .alarmsChanged(alarms, origin):
            try container.encode(alarms, forKey: .alarms)
            try container.encode(origin, forKey: .origin)
        case let .sleepSynced(fetched, stored):
            try container.encode(fetched, forKey: .fetched)
            try container.encode(stored, forKey: .stored)
        case let .battery(level):
            try container.encode(level, forKey: .battery)
        case let .heartRate(sample):
            try container.encode(sample.bpm, forKey: .bpm)
            try container.encode(sample.sensorContact, forKey: .sensorContact)
            try container.encodeIfPresent(sample.energyExpended, forKey: .energyExpended)
            try container.encode(sample.rrIntervals, forKey: .rrIntervals)
        case let .liveStage(stage, kind):
            try container.encode(stage, forKey: .stage)
            try container.encode(kind, forKey: .liveKind)
        case let .fellAsleep(session), let .wokeUp(session):
            try container.encode(session, forKey: .session)
        case let .session(change, session, reason):
            try container.encode(change, forKey: .change)
            try container.encode(session, forKey: .session)
            try container.encodeIfPresent(reason, forKey: .reason)
        case let .night(night):
            try container.encode(night.name, forKey: .event)
            try container.encodeIfPresent(night.stage, forKey: .stage)
            try container.encodeIfPresent(night.alarmSlot, forKey: .alarmSlot)
        case let .smartWake(slot, alarmTime, outcome, stage):
            try container.encode(slot, forKey: .alarmSlot)
            try container.encode(alarmTime, forKey: .alarmTime)
            try container.encode(outcome, forKey: .outcome)
            try container.encodeIfPresent(stage, forKey: .stage)
        case let .clock(trusted, reason):
            try container.encode(trusted, forKey: .trusted)
            try container.encodeIfPresent(reason, forKey: .reason)
        case let .storage(condition, reason):
            try container.encode(condition == nil, forKey: .writable)
            try container.encodeIfPresent(condition, forKey: .condition)
            try container.encodeIfPresent(reason, forKey: .reason)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        watch = try container.decode(WatchID.self, forKey: .watch)
        time = try container.decode(Date.self, forKey: .time)
        switch try container.decode(KindName.self, forKey: .type) {
        case .connection:
            kind = .connection(connected: try container.decode(Bool.self, forKey: .connected), reason: try container.decodeIfPresent(String.self, forKey: .reason))
        case .alarmsChanged:
            kind = .alarmsChanged(alarms: try container.decode([Alarm].self, forKey: .alarms), origin: try container.decode(AlarmTableOrigin.self, forKey: .origin))
        case .sleepSynced:
            kind = .sleepSynced(fetched: try container.decode(Int.self, forKey: .fetched), stored: try container.decode(Int.self, forKey: .stored))
        case .battery:
            kind = .battery(level: try container.decode(Int.self, forKey: .battery))
        case .heartRate:
            kind = .heartRate(HeartRateSample(time: time, bpm: try container.decode(Int.self, forKey: .bpm),
                                              sensorContact: try container.decode(SensorContact.self, forKey: .sensorContact),
                                              energyExpended: try container.decodeIfPresent(Int.self, forKey: .energyExpended),
                                              rrIntervals: try container.decode([Int].self, forKey: .rrIntervals)))
        case .liveStage:
            kind = .liveStage(stage: try container.decode(SleepStage.self, forKey: .stage), kind: try container.decode(LiveStage.Change.self, forKey: .liveKind))
        case .fellAsleep:
            kind = .fellAsleep(session: try container.decode(LiveSleepSession.self, forKey: .session))
        case .wokeUp:
            kind = .wokeUp(session: try container.decode(LiveSleepSession.self, forKey: .session))
        case .session:
            kind = .session(change: try container.decode(SessionChange.self, forKey: .change), session: try container.decode(LiveSleepSession.self, forKey: .session),
                            reason: try container.decodeIfPresent(String.self, forKey: .reason))
        case .night:
            kind = .night(NightEvent(try container.decode(NightEvent.Name.self, forKey: .event), stage: try container.decodeIfPresent(SleepStage.self, forKey: .stage),
                                     alarmSlot: try container.decodeIfPresent(Int.self, forKey: .alarmSlot)))
        case .smartWake:
            kind = .smartWake(slot: try container.decode(Int.self, forKey: .alarmSlot), alarmTime: try container.decode(Date.self, forKey: .alarmTime),
                              outcome: try container.decode(SmartWakeOutcome.self, forKey: .outcome), stage: try container.decodeIfPresent(SleepStage.self, forKey: .stage))
        case .clock:
            kind = .clock(trusted: try container.decode(Bool.self, forKey: .trusted), reason: try container.decodeIfPresent(String.self, forKey: .reason))
        case .storage:
            kind = .storage(condition: try container.decodeIfPresent(StorageCondition.self, forKey: .condition), reason: try container.decodeIfPresent(String.self, forKey: .reason))
        }
    }
}

/// What the daemon knows of one watch right now; read by D-Bus property getters from any thread.
public struct WatchStatus: Sendable, Codable, Hashable {
    public var id: WatchID
    public var name: String?
    public var simulated: Bool
    /// The dialect the gateway speaks with it; nil from a daemon older than this property (API version 3 has it).
    public var dialect: Dialect?
    public var connected = false
    public var batteryLevel: Int?
    public var batteryState: BatteryState?
    /// The last heart rate (bpm) the watch sent while the link is up; nil otherwise.
    public var heartRate: Int?
    public var lastSync: Date?
    public var info: DeviceInfo?
    public var lastError: String?
    public var syncing = false
    /// The latest live session's state; nil before the first.
    public var sessionState: SessionState?
    /// The stage the watch last reported during the open live session; nil without one.
    public var sleepStage: SleepStage?
    /// Why the gateway holds the watch's clock and scheduled syncs (it does not trust the system
    /// clock); nil while it sets them.
    public var clockHeld: String?

    public enum SessionState: String, Sendable, Codable, Hashable, CaseIterable {
        case open, interrupted, closed, complete
    }

    public init(id: WatchID, name: String?, simulated: Bool, dialect: Dialect? = nil) {
        self.id = id
        self.name = name
        self.simulated = simulated
        self.dialect = dialect
    }
}

extension WatchStatus {
    public static func sessionState(_ session: LiveSleepSession?) -> SessionState? {
        guard let session else { return nil }
        switch session.state {
        case .open: return session.interrupted ? .interrupted : .open
        case .closed: return .closed
        case .complete: return .complete
        }
    }
}
