import Foundation
import TSModels

/// The size of a per-minute sample, which the model decides (protocol-spec/huami/huami.md §8): 4 bytes
/// on the Mi Band 3/4, Bip/Bip S, GTS/GTR with older firmware; 8 on the Mi Band 5/6, Bip U, GTS 2/GTR 2.
public enum HuamiSampleFormat: Int, Sendable, Hashable, CaseIterable {
    case fourByte = 4
    case eightByte = 8

    public var size: Int { rawValue }
}

/// One minute of activity: kind, intensity, steps, heart rate (0 and 255: none); the 8-byte form
/// adds a byte no source reads, then the sleep, deep and REM values.
public struct HuamiSample: Sendable, Hashable {
    public var kind: UInt8
    public var intensity: UInt8
    public var steps: UInt8
    public var heartRate: UInt8
    public var unknown: UInt8
    public var sleep: UInt8
    public var deep: UInt8
    public var rem: UInt8

    public init(kind: UInt8, intensity: UInt8 = 0, steps: UInt8 = 0, heartRate: UInt8 = 0, unknown: UInt8 = 0, sleep: UInt8 = 0, deep: UInt8 = 0, rem: UInt8 = 0) {
        self.kind = kind
        self.intensity = intensity
        self.steps = steps
        self.heartRate = heartRate
        self.unknown = unknown
        self.sleep = sleep
        self.deep = deep
        self.rem = rem
    }

    /// A minute a simulated band writes for `stage` (§9 read backwards): 4-byte kind 9 light, 11
    /// deep (REM, which the 4-byte form lacks, as light), kind 1 awake; 8-byte kind 120 with deep
    /// 60 or REM 70 over the thresholds, kind 1 awake. `heartRate` nil writes 255 (none).
    public static func minute(_ stage: SleepStage, format: HuamiSampleFormat, heartRate: UInt8? = nil) -> HuamiSample {
        let bpm = heartRate ?? 255
        switch (format, stage) {
        case (.fourByte, .deep): return HuamiSample(kind: 11, intensity: 5, heartRate: bpm)
        case (.fourByte, .light), (.fourByte, .rem): return HuamiSample(kind: 9, intensity: 10, heartRate: bpm)
        case (.eightByte, .light): return HuamiSample(kind: HuamiSleepReader.asleepKind8, intensity: 10, heartRate: bpm, sleep: 30, deep: 10, rem: 10)
        case (.eightByte, .deep): return HuamiSample(kind: HuamiSleepReader.asleepKind8, intensity: 5, heartRate: bpm, sleep: 30, deep: 60, rem: 10)
        case (.eightByte, .rem): return HuamiSample(kind: HuamiSleepReader.asleepKind8, intensity: 15, heartRate: bpm, sleep: 30, deep: 10, rem: 70)
        case (_, .awake): return HuamiSample(kind: 1, intensity: 40, steps: 2, heartRate: bpm)
        }
    }

    /// A minute off the wrist (4-byte kind 3, 8-byte kind 115): no data.
    public static func notWorn(format: HuamiSampleFormat) -> HuamiSample {
        HuamiSample(kind: format == .fourByte ? 3 : HuamiSleepReader.notWornKind8, heartRate: 255)
    }

    /// The beats per minute measured in this minute, nil for 0 and 255 (none).
    public var bpm: Int? { heartRate == 0 || heartRate == 255 ? nil : Int(heartRate) }

    public static func decode(_ data: [UInt8], format: HuamiSampleFormat) throws(HuamiError) -> [HuamiSample] {
        guard data.count % format.size == 0 else {
            throw HuamiError(.partialSample, "\(data.count) data bytes are not a whole number of \(format.size)-byte samples")
        }
        var out: [HuamiSample] = []
        out.reserveCapacity(data.count / format.size)
        var at = 0
        while at < data.count {
            let s = data[at..<at + format.size].map { $0 }
            out.append(format == .fourByte
                ? HuamiSample(kind: s[0], intensity: s[1], steps: s[2], heartRate: s[3])
                : HuamiSample(kind: s[0], intensity: s[1], steps: s[2], heartRate: s[3], unknown: s[4], sleep: s[5], deep: s[6], rem: s[7]))
            at += format.size
        }
        return out
    }

    /// The samples' bytes (the 4-byte form drops the last four values).
    public static func encode(_ samples: [HuamiSample], format: HuamiSampleFormat) -> [UInt8] {
        samples.flatMap { s in
            format == .fourByte ? [s.kind, s.intensity, s.steps, s.heartRate] : [s.kind, s.intensity, s.steps, s.heartRate, s.unknown, s.sleep, s.deep, s.rem]
        }
    }
}

/// A fetched run of samples: the first is the minute starting at `start` (the instant of the
/// start answer's time), each next one a minute later.
public struct HuamiActivity: Sendable, Hashable {
    public var start: Int64
    public var format: HuamiSampleFormat
    public var samples: [HuamiSample]

    public init(start: Int64, format: HuamiSampleFormat, samples: [HuamiSample]) {
        self.start = start
        self.format = format
        self.samples = samples
    }

    /// Reads a transfer's data (`HuamiFetchAssembler.finish`) with the start answer's time.
    public init(start: HuamiTime, format: HuamiSampleFormat, data: [UInt8]) throws(HuamiError) {
        self.init(start: start.unixSeconds, format: format, samples: try HuamiSample.decode(data, format: format))
    }

    /// The first second after the last sample: the `since` of the next fetch.
    public var end: Int64 { start + Int64(samples.count) * 60 }

    /// Every minute with a heart rate (0 and 255 are none), at the minute's start.
    public var heartRates: [HeartRateSample] {
        samples.enumerated().compactMap { index, sample in
            sample.bpm.map { HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(start + Int64(index) * 60)), bpm: $0) }
        }
    }
}

/// What a minute says about sleep (protocol-spec/huami/huami.md §9).
public enum HuamiMinute: Sendable, Hashable {
    case asleep(SleepStage)
    /// Worn and not asleep: between two asleep minutes, an awake stretch of the night.
    case awake
    /// Not worn, charging, or no kind to go on: a night cannot run through it.
    case noData
}

/// Turns samples into sleep items (protocol-spec/huami/huami.md §9). It reads successive fetches in
/// order and carries what it needs from one to the next in `state`, which the central keeps with
/// its fetch cursor, so a night split across two fetches reads as one.
public struct HuamiSleepReader: Sendable {
    /// 8-byte samples: a minute of kind 120 is asleep; REM if `rem & 127` > 55, else deep if
    /// `deep & 127` > 42, else light. Gadgetbridge calls these thresholds arbitrary: a heuristic.
    public static let remThreshold: UInt8 = 55
    public static let deepThreshold: UInt8 = 42
    public static let asleepKind8: UInt8 = 120
    public static let notWornKind8: UInt8 = 115
    public static let chargingKind8: UInt8 = 118

    /// What carries over from one fetch to the next.
    public struct State: Sendable, Hashable, Codable {
        /// 4-byte samples: the last kind (low nibble) other than 0 and 10, which those two repeat.
        public var carriedKind: UInt8?
        /// The end of the last sample read; a fetch starting elsewhere starts afresh.
        public var end: Int64?
        /// Whether a night is open (its last asleep minute was read, no gap since).
        public var nightOpen: Bool
        /// Awake minutes after the open night's last asleep minute, not yet emitted.
        public var pendingAwakeStart: Int64?
        public var pendingAwakeMinutes: Int

        public init(carriedKind: UInt8? = nil, end: Int64? = nil, nightOpen: Bool = false, pendingAwakeStart: Int64? = nil, pendingAwakeMinutes: Int = 0) {
            self.carriedKind = carriedKind
            self.end = end
            self.nightOpen = nightOpen
            self.pendingAwakeStart = pendingAwakeStart
            self.pendingAwakeMinutes = pendingAwakeMinutes
        }
    }

    /// An awake stretch longer than this ends the night (the project's rule; the sleep analysis then
    /// splits segments at 30 minutes of awake on its own).
    public let maxAwakeMinutes: Int
    public private(set) var state: State

    public init(maxAwakeMinutes: Int = 60, state: State = State()) {
        self.maxAwakeMinutes = maxAwakeMinutes
        self.state = state
    }

    /// What one sample says, given the kind carried from earlier minutes (4-byte form).
    public static func minute(_ sample: HuamiSample, format: HuamiSampleFormat, carriedKind: inout UInt8?) -> HuamiMinute {
        switch format {
        case .eightByte:
            switch sample.kind {
            case asleepKind8:
                if sample.rem & 127 > remThreshold { return .asleep(.rem) }
                if sample.deep & 127 > deepThreshold { return .asleep(.deep) }
                return .asleep(.light)
            case notWornKind8, chargingKind8: return .noData
            default: return .awake
            }
        case .fourByte:
            var kind = sample.kind & 0x0F
            if kind == 0 || kind == 10 {
                guard let carried = carriedKind else { return .noData }
                kind = carried
            } else {
                carriedKind = kind
            }
            switch kind {
            case 9: return .asleep(.light)
            case 11: return .asleep(.deep)
            case 3, 6: return .noData
            default: return .awake
            }
        }
    }

    /// The sleep items of `activity` that are settled: asleep stretches as they come (same-stage
    /// minutes joined), awake stretches once the night goes on after them. Awake minutes at the
    /// end stay pending in `state`.
    public mutating func read(_ activity: HuamiActivity) -> [SleepItem] {
        var items: [SleepItem] = []
        if state.end != activity.start { closeNight() }
        var carried = state.carriedKind
        for (index, sample) in activity.samples.enumerated() {
            let time = activity.start + Int64(index) * 60
            switch Self.minute(sample, format: activity.format, carriedKind: &carried) {
            case let .asleep(stage):
                if let awakeStart = state.pendingAwakeStart, state.pendingAwakeMinutes > 0 {
                    items.append(SleepItem(stage: .awake, start: awakeStart, duration: Int64(state.pendingAwakeMinutes) * 60))
                }
                state.pendingAwakeStart = nil
                state.pendingAwakeMinutes = 0
                if let last = items.last, last.stage == stage, last.end == time {
                    items[items.count - 1].duration += 60
                } else {
                    items.append(SleepItem(stage: stage, start: time, duration: 60))
                }
                state.nightOpen = true
            case .awake:
                guard state.nightOpen else { continue }
                if state.pendingAwakeStart == nil { state.pendingAwakeStart = time }
                state.pendingAwakeMinutes += 1
                if state.pendingAwakeMinutes > maxAwakeMinutes { closeNight() }
            case .noData:
                closeNight()
            }
        }
        state.carriedKind = carried
        state.end = activity.end
        return items
    }

    mutating func closeNight() {
        state.nightOpen = false
        state.pendingAwakeStart = nil
        state.pendingAwakeMinutes = 0
    }
}

/// The sleep items of successive transfers as one stream: an asleep stretch that runs into the end
/// of a transfer is held until the next transfer shows whether it goes on, and then joined with
/// its rest, so a stretch is one item wherever the band's transfers were cut (a sync's range moves
/// the cut: protocol-spec/huami/huami.md §9, rule 4). The central's sync and the capture decoder both read
/// through it, so they give the same items.
public struct HuamiTransferSleepReader: Sendable {
    public private(set) var reader: HuamiSleepReader
    /// The asleep stretch that ran into the end of the last transfer, not handed over yet.
    public private(set) var held: SleepItem?

    public init(reader: HuamiSleepReader = HuamiSleepReader()) {
        self.reader = reader
    }

    /// The items of `activity` that are settled, with the held stretch in front (joined with its
    /// rest when this transfer goes on with it); a stretch running into this transfer's end is held.
    public mutating func read(_ activity: HuamiActivity) -> [SleepItem] {
        var items = reader.read(activity)
        if let last = held {
            if let first = items.first, first.start == last.end, first.stage == last.stage {
                items[0] = SleepItem(stage: last.stage, start: last.start, duration: last.duration + first.duration)
            } else {
                items.insert(last, at: 0)
            }
            held = nil
        }
        if let last = items.last, last.end == activity.end {
            held = items.removeLast()
        }
        return items
    }

    /// The held stretch, once no transfer follows.
    public mutating func finish() -> [SleepItem] {
        defer { held = nil }
        return held.map { [$0] } ?? []
    }
}
