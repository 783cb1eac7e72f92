import Foundation
import TSModels

/// The QRing dialect's reader of captured bytes (`protocol decode`): 16-byte packets on the
/// command pair, read as the central's requests and the ring's answers (the heart-rate log and
/// steps assembled over their packets), and big-data frames on the second pair (sleep read into
/// items). The ring dates by "days ago" and its own wall clock: days are counted from the
/// capture's time (now for pasted bytes) and read in `zone`. Packets with a wrong checksum or
/// length and big-data frames with a wrong CRC are shown as such.
public struct QRingCaptureDecoder: CaptureDecoder {
    public let zone: TimeZone

    public init(zone: TimeZone = .current) { self.zone = zone }

    public func reading(clockIn zone: TimeZone) -> any CaptureDecoder { QRingCaptureDecoder(zone: zone) }

    public func session(started: Date?) -> any CaptureSessionDecoder {
        Session(zone: zone, today: RingClock.today(at: started ?? Date(), in: zone))
    }

    /// What `--json` shows of one packet or frame as `message`.
    public struct Meaning: Sendable, Encodable {
        public var command: String
        /// The packet's command byte, or the big-data frame's type.
        public var code: Int
        public var data: String
        public var fields: [String: JSONValue]?
        public var records: [SleepItem]?
        public var heartRate: [HeartRateSample]?
        public var steps: [Steps]?

        public struct Steps: Sendable, Encodable {
            public var start: Int64
            public var steps: Int
            public var calories: Int
            public var distanceMeters: Int
        }
    }

    static let commandNames: [UInt8: String] = [
        QRingCommand.setTime: "setTime", QRingCommand.battery: "battery", QRingCommand.heartRateLog: "heartRateLog",
        QRingCommand.heartRateLogSettings: "heartRateLogSettings", QRingCommand.realTimeContinue: "realTimeContinue",
        QRingCommand.spo2Switch: "spo2Switch", QRingCommand.stressSwitch: "stressSwitch", QRingCommand.hrvSwitch: "hrvSwitch",
        QRingCommand.steps: "steps", QRingCommand.realTimeStart: "realTimeStart", QRingCommand.realTimeStop: "realTimeStop",
        QRingCommand.notice: "notice",
    ]

    static func name(_ command: UInt8) -> String { commandNames[command & 0x7F] ?? "command \(hex(command & 0x7F))" }

    struct Session: CaptureSessionDecoder {
        let zone: TimeZone
        let today: RingDate
        var pending: [String: [UInt8]] = [:]
        var bigData: [String: BigDataReassembler] = [:]
        /// The day of the heart-rate log the central asked for last.
        var requestedLogDay: RingDate?
        var heartRateLog: HeartRateLogAssembler?
        var heldLogStart: [UInt8]?
        var steps: StepsAssembler?

        mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            channel == .second ? bigDataFrames(value, flow: flow) : packets(value, flow: flow)
        }

        mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            let key = "\(flow)"
            if channel == .second {
                guard bigData[key]?.hasPartialFrame == true else { return [] }
                bigData[key]?.expire()
                return [DecodedFrame(.corruptFrame, "a big-data frame whose bytes stopped coming", meaning: "incomplete", fields: ["code": "incomplete"])]
            }
            guard let rest = pending.removeValue(forKey: key), !rest.isEmpty else { return [] }
            return [DecodedFrame(.corruptFrame, "\(rest.count) byte(s) of a packet whose other bytes never came", meaning: "packetLength",
                                 fields: ["code": QRingError.Code.packetLength.rawValue])]
        }

        // MARK: The command pair

        mutating func packets(_ value: [UInt8], flow: CaptureFlow) -> [DecodedFrame] {
            var bytes = pending.removeValue(forKey: "\(flow)") ?? []
            bytes += value
            var frames: [DecodedFrame] = []
            while bytes.count >= QRingPacket.size {
                frames.append(packet(Array(bytes.prefix(QRingPacket.size)), flow: flow))
                bytes.removeFirst(QRingPacket.size)
            }
            if !bytes.isEmpty { pending["\(flow)"] = bytes }
            return frames
        }

        mutating func packet(_ raw: [UInt8], flow: CaptureFlow) -> DecodedFrame {
            let name = QRingCaptureDecoder.name(raw[0])
            let data = raw[1..<15].map { String(format: "%02x", $0) }.joined()
            var meaning = Meaning(command: name, code: Int(raw[0] & 0x7F), data: data)
            let expected = QRingPacket.checksum(raw[0..<15])
            guard raw[15] == expected else {
                return DecodedFrame(.corruptFrame, "\(name): checksum \(hex(raw[15])), the bytes add up to \(hex(expected))", meaning: meaning,
                                    fields: ["code": QRingError.Code.checksumMismatch.rawValue])
            }
            if raw[0] & QRingPacket.errorBit != 0 {
                return DecodedFrame(.invalidMessage, "\(name): the ring reports an error", meaning: meaning,
                                    fields: ["code": QRingError.Code.ringReportedError.rawValue])
            }
            if flow == .write { return request(raw, meaning: meaning) }
            do {
                switch raw[0] {
                case QRingCommand.heartRateLog:
                    // Without the request in the capture (bytes pasted from a notification log),
                    // the day is the one packet 1 names: packet 0 waits for it.
                    if heartRateLog == nil, requestedLogDay == nil, raw[1] == 0 {
                        heldLogStart = raw
                        return DecodedFrame(.frame, "heartRateLog: packet 0 of \(raw[2])", meaning: meaning)
                    }
                    var assembler: HeartRateLogAssembler
                    if let started = heartRateLog {
                        assembler = started
                    } else if let held = heldLogStart, raw[1] == 1 {
                        let stamp = Int64(raw[2]) | Int64(raw[3]) << 8 | Int64(raw[4]) << 16 | Int64(raw[5]) << 24
                        assembler = HeartRateLogAssembler(day: RingDateTime(wallSeconds: stamp).date, zone: zone)
                        heldLogStart = nil
                        _ = try assembler.feed(held)
                    } else {
                        assembler = HeartRateLogAssembler(day: requestedLogDay ?? today, zone: zone)
                    }
                    let log = try assembler.feed(raw)
                    heartRateLog = log == nil ? assembler : nil
                    switch log {
                    case nil: return DecodedFrame(.frame, "heartRateLog: packet \(raw[1])", meaning: meaning)
                    case .noData:
                        meaning.heartRate = []
                        return DecodedFrame(.frame, "heartRateLog: no log for that day", meaning: meaning)
                    case let .samples(samples, minutes):
                        meaning.heartRate = samples
                        meaning.fields = ["slotMinutes": .number(Double(minutes))]
                        return DecodedFrame(.frame, "heartRateLog: last packet, \(samples.count) sample(s)", meaning: meaning)
                    }
                case QRingCommand.steps:
                    var assembler = steps ?? StepsAssembler(zone: zone)
                    let intervals = try assembler.feed(raw)
                    steps = intervals == nil ? assembler : nil
                    guard let intervals else { return DecodedFrame(.frame, "steps: packet", meaning: meaning) }
                    meaning.steps = intervals.map { Meaning.Steps(start: $0.start, steps: $0.steps, calories: $0.calories, distanceMeters: $0.distanceMeters) }
                    return DecodedFrame(.frame, "steps: last packet, \(intervals.count) interval(s)", meaning: meaning)
                default:
                    let answer = try QRingAnswer(packet: raw)
                    meaning.fields = QRingCaptureDecoder.fields(of: answer)
                    return DecodedFrame(.frame, "\(name): \(QRingCaptureDecoder.gist(answer))", meaning: meaning)
                }
            } catch {
                heartRateLog = nil
                steps = nil
                return DecodedFrame(.invalidMessage, "\(name): invalid answer (\(error.code.rawValue)): \(error.message)", meaning: meaning,
                                    fields: ["code": error.code.rawValue])
            }
        }

        mutating func request(_ raw: [UInt8], meaning: Meaning) -> DecodedFrame {
            var meaning = meaning
            switch raw[0] {
            case QRingCommand.heartRateLog:
                let stamp = Int64(raw[1]) | Int64(raw[2]) << 8 | Int64(raw[3]) << 16 | Int64(raw[4]) << 24
                let day = RingDateTime(wallSeconds: stamp).date
                requestedLogDay = day
                heartRateLog = nil
                heldLogStart = nil
                meaning.fields = ["day": .string(day.description)]
                return DecodedFrame(.frame, "heartRateLog request for \(day)", meaning: meaning)
            case QRingCommand.steps:
                steps = nil
                meaning.fields = ["daysAgo": .number(Double(raw[1]))]
                return DecodedFrame(.frame, "steps request, \(raw[1]) day(s) ago", meaning: meaning)
            default:
                return DecodedFrame(.frame, "\(meaning.command) request", meaning: meaning)
            }
        }

        // MARK: The big-data pair

        mutating func bigDataFrames(_ value: [UInt8], flow: CaptureFlow) -> [DecodedFrame] {
            let key = "\(flow)"
            var reassembler = bigData[key] ?? BigDataReassembler()
            let before = (reassembler.garbageBytes, reassembler.oversized, reassembler.crcMismatches)
            let frames = reassembler.feed(value)
            bigData[key] = reassembler
            var decoded: [DecodedFrame] = []
            if reassembler.garbageBytes > before.0 {
                let count = reassembler.garbageBytes - before.0
                decoded.append(DecodedFrame(.garbage, "\(count) byte(s) outside any big-data frame", fields: ["bytes": count]))
            }
            if reassembler.oversized > before.1 {
                decoded.append(DecodedFrame(.garbage, "a big-data marker with a length over \(reassembler.maxPayload) (no frame start)", fields: ["code": "oversized"]))
            }
            for _ in before.2..<reassembler.crcMismatches {
                decoded.append(DecodedFrame(.corruptFrame, "a big-data frame whose CRC-16 does not match", meaning: "crc mismatch", fields: ["code": "crcMismatch"]))
            }
            for frame in frames {
                var meaning = Meaning(command: frame.type == BigDataFrame.sleepType ? "sleep" : "bigData", code: Int(frame.type),
                                      data: frame.payload.map { String(format: "%02x", $0) }.joined())
                guard flow == .notification, frame.type == BigDataFrame.sleepType else {
                    decoded.append(DecodedFrame(.frame, "big data \(hex(frame.type)) \(flow == .write ? "request" : "answer"), \(frame.payload.count) byte(s)", meaning: meaning))
                    continue
                }
                do {
                    let days = try RingSleep.days(payload: frame.payload, today: today, zone: zone)
                    meaning.records = days.flatMap(\.items)
                    decoded.append(DecodedFrame(.frame, "sleep: \(days.count) day(s), \(meaning.records?.count ?? 0) item(s)", meaning: meaning))
                } catch {
                    decoded.append(DecodedFrame(.invalidMessage, "sleep: invalid answer (\(error.code.rawValue)): \(error.message)", meaning: meaning,
                                                fields: ["code": error.code.rawValue]))
                }
            }
            return decoded
        }
    }

    static func gist(_ answer: QRingAnswer) -> String {
        switch answer {
        case let .timeSet(newSleep): "clock set\(newSleep ? " (big-data sleep)" : "")"
        case let .battery(battery), let .batteryPushed(battery): "battery \(battery.level) %\(battery.charging ? ", charging" : "")"
        case let .newData(kind): "new \(kind.rawValue) data"
        case let .notice(code): "notice \(hex(code))"
        case let .heartRateLogSettings(config): "heart-rate log \(config.schedule.enabled ? "on" : "off"), every \(config.schedule.intervalMinutes) min"
        case .heartRateLogSettingsWritten: "heart-rate log settings written"
        case let .monitorSwitch(monitor, enabled): "\(monitor.rawValue) \(enabled ? "on" : "off")"
        case let .monitorSwitchWritten(monitor): "\(monitor.rawValue) switch written"
        case let .realTimeHeartRate(bpm): "heart rate \(bpm) bpm"
        case let .realTimeError(code): "no reading (error \(code))"
        case let .realTimeOther(type): "a real-time reading of type \(type)"
        case .realTimeStopped: "real-time reading stopped"
        }
    }

    static func fields(of answer: QRingAnswer) -> [String: JSONValue] {
        switch answer {
        case let .timeSet(newSleep): ["newSleepProtocol": .bool(newSleep)]
        case let .battery(battery), let .batteryPushed(battery): ["level": .number(Double(battery.level)), "charging": .bool(battery.charging)]
        case let .newData(kind): ["kind": .string(kind.rawValue)]
        case let .notice(code): ["notice": .number(Double(code))]
        case let .heartRateLogSettings(config):
            ["enabled": .bool(config.schedule.enabled), "intervalMinutes": .number(Double(config.schedule.intervalMinutes))]
        case .heartRateLogSettingsWritten, .realTimeStopped: [:]
        case let .monitorSwitch(monitor, enabled): ["monitor": .string(monitor.rawValue), "enabled": .bool(enabled)]
        case let .monitorSwitchWritten(monitor): ["monitor": .string(monitor.rawValue)]
        case let .realTimeHeartRate(bpm): ["bpm": .number(Double(bpm))]
        case let .realTimeError(code): ["error": .number(Double(code))]
        case let .realTimeOther(type): ["type": .number(Double(type))]
        }
    }
}
