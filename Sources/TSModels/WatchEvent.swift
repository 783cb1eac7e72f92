/// What a watch reports on its own, in any dialect.
public enum WatchEvent: Sendable, Hashable {
    /// The alarm table was changed on the watch's side.
    case alarmsChanged(AlarmTableChange)
    /// A live sleep stage.
    case liveStage(LiveStage)
    /// An alarm rang, was dismissed, snoozed or timed out.
    case alarmAlert(AlarmAlertNotice)
    /// The link ended (whoever ended it), with the reason.
    case linkLost(reason: String)
}

/// An alarm table the watch announced as changed on its side, and who changed it.
public struct AlarmTableChange: Sendable, Hashable {
    public var alarms: [Alarm]
    public var origin: AlarmTableOrigin

    public init(alarms: [Alarm], origin: AlarmTableOrigin) {
        self.alarms = alarms
        self.origin = origin
    }
}

/// One live sleep stage: its start (Unix seconds), the stage, and what it means for the night.
public struct LiveStage: Sendable, Hashable {
    public enum Change: String, Sendable, Hashable, Codable, CaseIterable {
        case fellAsleep, stageChanged, wokeUp
    }

    public var time: Int64
    public var stage: SleepStage
    public var change: Change

    public init(time: Int64, stage: SleepStage, change: Change) {
        self.time = time
        self.stage = stage
        self.change = change
    }
}

/// An alarm on the watch ringing, or ending its ringing.
public struct AlarmAlertNotice: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case ringing, dismissed, snoozed, timedOut
    }

    public var slot: Int
    /// When it happened, Unix seconds.
    public var time: Int64
    public var kind: Kind

    public init(slot: Int, time: Int64, kind: Kind) {
        self.slot = slot
        self.time = time
        self.kind = kind
    }
}

/// Why the gateway makes a watch ring.
public enum RingPurpose: String, Sendable, Hashable, Codable, CaseIterable {
    /// The alarm's next occurrence, rung early by the gateway's smart wake.
    case smartWake
    /// A test that changes nothing.
    case test
}

/// What a watch did when asked to ring.
public enum RingOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case ringing, alreadyRinging, alreadyRang
}
