import Foundation
import TSModels

/// The Huami dialect's reader of captured bytes (`protocol decode`, protocol-spec/huami/huami.md §13):
/// each value read by the characteristic it went over — the auth steps (the key, the random
/// number and the encrypted number masked, never shown), the configuration characteristic's
/// alarms and their answers, the clock, battery and heart-rate settings, and the activity fetch:
/// its start, the band's count, the data packets by counter and, once a transfer is whole, its
/// samples read into sleep items and heart rate as the central reads them. Values that do not
/// read (a wrong length, an unknown opcode, a packet out of turn, data with no fetch started)
/// come back with another verdict than `.frame`, never dropped.
public struct HuamiCaptureDecoder: CaptureDecoder {
    public init() {}

    public func session(started: Date?) -> any CaptureSessionDecoder { Session(model: nil) }

    /// The band's name says its model, and the model the size of its samples (§8); without one,
    /// the Mi Band 4's rules (4-byte samples), as the central's.
    public func session(started: Date?, peripheralName: String?) -> any CaptureSessionDecoder {
        Session(model: peripheralName.flatMap(HuamiModel.init(advertisedName:)))
    }

    /// The battery level, the clock and the heart-rate values carry no check of their own (§6, §3,
    /// §5): a few bytes of any dialect pass them, so a capture without a discovery does not find
    /// their handles by what they carry.
    public func identifiesHandles(of channel: CaptureChannel) -> Bool {
        switch Role(channel) {
        case .battery, .currentTime, .heartRateControlPoint, .heartRateMeasurement: false
        default: true
        }
    }

    /// What `--json` shows of one value as `message`.
    public struct Meaning: Sendable, Encodable {
        /// The characteristic: auth, configuration, fetchControl, activityData, battery, currentTime,
        /// heartRateControlPoint, heartRateMeasurement.
        public var characteristic: String
        public var command: String
        /// The value in hex, with the auth secrets masked.
        public var data: String
        public var fields: [String: JSONValue]?
        public var records: [SleepItem]?
        public var heartRate: [HeartRateSample]?
        public var alarms: [Alarm]?
    }

    /// The characteristics a band speaks over (protocol-spec/huami/huami.md §1), by their UUIDs.
    enum Role: String {
        case auth, configuration, fetchControl, activityData, battery, currentTime, heartRateControlPoint, heartRateMeasurement

        init?(_ channel: CaptureChannel) {
            if channel == .main { self = .configuration; return }
            guard let uuid = channel.characteristic?.uuid else { return nil }
            switch uuid {
            case HuamiGATT.auth: self = .auth
            case HuamiGATT.configuration: self = .configuration
            case HuamiGATT.fetchControl: self = .fetchControl
            case HuamiGATT.activityData: self = .activityData
            case HuamiGATT.battery: self = .battery
            case HuamiGATT.currentTime: self = .currentTime
            case HuamiGATT.heartRateControlPoint: self = .heartRateControlPoint
            case HuamiGATT.heartRateMeasurement: self = .heartRateMeasurement
            default: return nil
            }
        }
    }

    /// Bytes that are not a message of their characteristic: lengths are the band's framing, an
    /// opcode no step has is not a Huami value at all, the rest is a message with a wrong field.
    static func verdict(_ code: HuamiError.Code) -> DecodedFrame.Verdict {
        switch code {
        case .tooShort, .badLength, .partialSample, .countNotWholeSamples: .corruptFrame
        case .notAResponse, .unknownOpcode: .garbage
        default: .invalidMessage
        }
    }

    /// One transfer of the activity fetch, from the band's start answer on.
    struct Transfer {
        var start: HuamiTime
        var assembler: HuamiFetchAssembler
        /// The counter the next packet in turn has, and the counters that came ahead of it.
        var nextCounter: UInt8 = 0
        var ahead: Set<UInt8> = []
        /// The band said the transfer is done (`10 02 01`), with its CRC-32 when it sent one.
        var ended = false
        var crc: UInt32?
    }

    struct Session: CaptureSessionDecoder {
        let model: HuamiModel?
        let format: HuamiSampleFormat
        var transfer: Transfer?
        /// Reads the transfers as the central does: a stretch running into a transfer's end is held and joined with its rest.
        var reader = HuamiTransferSleepReader()
        var chunks = HuamiConfigChunkAssembler()
        /// A heart-rate command was written: the band's `2A37` values are measurements the central asked for.
        var measuring = false

        init(model: HuamiModel?) {
            self.model = model
            format = (model ?? .miBand4).sampleFormat(firmware: nil)
        }

        mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            guard let role = Role(channel) else {
                return [DecodedFrame(.garbage, "\(value.count) byte(s) on \(channel), which no Huami step uses", fields: ["bytes": value.count])]
            }
            switch (role, flow) {
            case (.auth, .write): return [authRequest(value)]
            case (.auth, .notification): return [authAnswer(value)]
            case (.configuration, .write): return [configRequest(value)]
            case (.configuration, .notification): return [configAnswer(value)]
            case (.fetchControl, .write): return [fetchRequest(value)]
            case (.fetchControl, .notification): return fetchAnswer(value)
            case (.activityData, .notification): return dataPacket(value)
            case (.battery, .read), (.battery, .notification): return [battery(value)]
            case (.currentTime, _): return [clock(value, flow: flow)]
            case (.heartRateControlPoint, .write): return [heartRateCommand(value)]
            case (.heartRateMeasurement, .notification): return [heartRateMeasurement(value)]
            default:
                return [DecodedFrame(.garbage, "\(role.rawValue): \(value.count) byte(s) in a direction it does not carry (\(flow.rawValue))",
                                     meaning: Meaning(characteristic: role.rawValue, command: "unexpected", data: Self.data(value, role: role)),
                                     fields: ["bytes": value.count])]
            }
        }

        /// Once, at the end of the data or the fetch-control stream: a transfer whose announced bytes
        /// never all came, and the sleep item that ran into the end of the last transfer.
        mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            guard let role = Role(channel), role == .activityData || role == .fetchControl, flow == .notification else { return [] }
            var frames: [DecodedFrame] = []
            if let open = transfer, !open.assembler.isComplete || !open.ended {
                transfer = nil
                let stopped = open.assembler.isComplete ? "the band never said the transfer is done" : open.assembler.abandoned().message
                frames.append(DecodedFrame(.corruptFrame, "activity data: \(stopped)", meaning: "transferEndedEarly",
                                           fields: ["code": HuamiError.Code.transferEndedEarly.rawValue]))
            }
            if let held = reader.finish().first {
                var decoded = Meaning(characteristic: Role.activityData.rawValue, command: "heldSleepItem", data: "")
                decoded.records = [held]
                frames.append(DecodedFrame(.frame, "activity data: the sleep item that ran to the end of the last transfer, no transfer going on with it: "
                                           + "\(held.stage) from \(held.start), \(held.duration / 60) min", meaning: decoded))
            }
            return frames
        }

        // MARK: Reading a value

        static func data(_ value: [UInt8], role: Role) -> String {
            guard role == .auth, value.count > 3 else { return hexString(value) }
            // The key, the random number and the encrypted number follow a 2-byte request head or a 3-byte answer head.
            let kept = value[0] == responseMarker ? 3 : 2
            return hexString(value.prefix(kept)) + " (\(value.count - kept) byte(s) masked)"
        }

        func meaning(_ role: Role, _ command: String, _ value: [UInt8], _ fields: [String: JSONValue]? = nil) -> Meaning {
            Meaning(characteristic: role.rawValue, command: command, data: Self.data(value, role: role), fields: fields)
        }

        func failed(_ role: Role, _ what: String, _ value: [UInt8], _ error: HuamiError) -> DecodedFrame {
            DecodedFrame(HuamiCaptureDecoder.verdict(error.code), "\(role.rawValue): \(what) that does not read (\(error.code.rawValue)): \(error.message)",
                         meaning: meaning(role, "unreadable", value), fields: ["code": error.code.rawValue])
        }

        func authRequest(_ value: [UInt8]) -> DecodedFrame {
            do {
                switch try HuamiAuthRequest(bytes: value) {
                case let .sendKey(flags, _):
                    return DecodedFrame(.frame, "auth: send the key (first pairing; the key masked)",
                                        meaning: meaning(.auth, "sendKey", value, ["authFlags": .number(Double(flags))]))
                case let .requestRandom(flags):
                    return DecodedFrame(.frame, "auth: ask for a random number (auth flags \(hex(flags.authFlags)), crypt flags \(hex(flags.cryptFlags)))",
                                        meaning: meaning(.auth, "requestRandom", value, Self.fields(flags)))
                case let .sendEncrypted(flags, _):
                    return DecodedFrame(.frame, "auth: the encrypted random number (masked)", meaning: meaning(.auth, "sendEncrypted", value, Self.fields(flags)))
                }
            } catch {
                return failed(.auth, "a request", value, error)
            }
        }

        static func fields(_ flags: HuamiAuthFlags) -> [String: JSONValue] {
            ["authFlags": .number(Double(flags.authFlags)), "cryptFlags": .number(Double(flags.cryptFlags))]
        }

        func authAnswer(_ value: [UInt8]) -> DecodedFrame {
            do {
                let answer = try HuamiAuthAnswer(bytes: value)
                switch answer {
                case .keyStored: return DecodedFrame(.frame, "auth: the band stored the key", meaning: meaning(.auth, "keyStored", value))
                case .random: return DecodedFrame(.frame, "auth: the band's challenge (16 random bytes, masked)", meaning: meaning(.auth, "random", value))
                case .accepted: return DecodedFrame(.frame, "auth: accepted, the central is authenticated", meaning: meaning(.auth, "accepted", value))
                case let .refused(opcode, status):
                    return DecodedFrame(.frame, "auth: refused: \(answer.error?.message ?? "status \(hex(status))")",
                                        meaning: meaning(.auth, "refused", value, ["opcode": .number(Double(opcode)), "status": .number(Double(status))]),
                                        fields: ["code": answer.error?.code.rawValue ?? "authFailed"])
                }
            } catch {
                return failed(.auth, "an answer", value, error)
            }
        }

        func configRequest(_ value: [UInt8]) -> DecodedFrame {
            do {
                switch try HuamiConfigRequest(bytes: value) {
                case let .setAlarm(alarm):
                    var decoded = meaning(.configuration, "setAlarm", value)
                    decoded.alarms = [alarm.alarm]
                    return DecodedFrame(.frame, "configuration: set alarm slot \(alarm.slot) to \(Self.two(alarm.hour)):\(Self.two(alarm.minute))\(alarm.isEnabled ? "" : ", off")",
                                        meaning: decoded)
                case let .clearAlarm(slot):
                    return DecodedFrame(.frame, "configuration: clear alarm slot \(slot)", meaning: meaning(.configuration, "clearAlarm", value, ["slot": .number(Double(slot))]))
                case .alarmStatus:
                    return DecodedFrame(.frame, "configuration: ask which alarm slots are set", meaning: meaning(.configuration, "alarmStatus", value))
                case .alarmTable:
                    return DecodedFrame(.frame, "configuration: ask for the alarm table", meaning: meaning(.configuration, "alarmTable", value))
                }
            } catch {
                return failed(.configuration, "a request", value, error)
            }
        }

        mutating func configAnswer(_ value: [UInt8]) -> DecodedFrame {
            do {
                switch try HuamiConfigAnswer(bytes: value) {
                case let .alarmSet(status):
                    return DecodedFrame(.frame, "configuration: alarm \(status == statusSuccess ? "set" : "not set, status \(hex(status))")",
                                        meaning: meaning(.configuration, "alarmSet", value, ["status": .number(Double(status))]))
                case let .alarmStatus(slots):
                    let on = slots.filter(\.isEnabled).map { "\($0.slot)" }.joined(separator: ", ")
                    return DecodedFrame(.frame, "configuration: \(slots.count) alarm slot(s) set\(on.isEmpty ? "" : ", on: \(on)")",
                                        meaning: meaning(.configuration, "alarmStatus", value, [
                                            "slots": .array(slots.map { .object(["slot": .number(Double($0.slot)), "enabled": .bool($0.isEnabled)]) }),
                                        ]))
                case let .chunk(chunk):
                    guard let whole = try chunks.feed(chunk) else {
                        return DecodedFrame(.frame, "configuration: a chunk of a long answer (\(chunk.payload.count) byte(s))", meaning: meaning(.configuration, "chunk", value))
                    }
                    guard whole.type == HuamiAlarmTable.chunkType else {
                        return DecodedFrame(.frame, "configuration: the last chunk of an answer of type \(hex(whole.type)) (\(whole.payload.count) byte(s))",
                                            meaning: meaning(.configuration, "chunk", value, ["type": .number(Double(whole.type))]))
                    }
                    var decoded = meaning(.configuration, "alarmTable", value)
                    decoded.alarms = try HuamiAlarmTable.alarms(payload: whole.payload).map(\.alarm)
                    return DecodedFrame(.frame, "configuration: the alarm table, \(decoded.alarms?.count ?? 0) alarm(s)", meaning: decoded)
                case let .other(opcode, status, rest):
                    return DecodedFrame(.frame, "configuration: answer to \(hex(opcode)), status \(hex(status)), \(rest.count) more byte(s)",
                                        meaning: meaning(.configuration, "answer", value, ["opcode": .number(Double(opcode)), "status": .number(Double(status))]))
                }
            } catch {
                chunks = HuamiConfigChunkAssembler()
                return failed(.configuration, "an answer", value, error)
            }
        }

        func fetchRequest(_ value: [UInt8]) -> DecodedFrame {
            do {
                switch try HuamiFetchRequest(bytes: value) {
                case let .start(type, since):
                    return DecodedFrame(.frame, "fetch: start, data type \(hex(type))\(type == HuamiFetchRequest.activityType ? " (activity)" : "") since \(since)",
                                        meaning: meaning(.fetchControl, "start", value, ["type": .number(Double(type)), "since": .number(Double(since.unixSeconds))]))
                case .fetchData:
                    return DecodedFrame(.frame, "fetch: send the data", meaning: meaning(.fetchControl, "fetchData", value))
                case .acknowledge:
                    return DecodedFrame(.frame, "fetch: acknowledge (the band may drop what it sent)", meaning: meaning(.fetchControl, "acknowledge", value))
                }
            } catch {
                return failed(.fetchControl, "a request", value, error)
            }
        }

        mutating func fetchAnswer(_ value: [UInt8]) -> [DecodedFrame] {
            let answer: HuamiFetchAnswer
            do { answer = try HuamiFetchAnswer(bytes: value) } catch { return [failed(.fetchControl, "an answer", value, error)] }
            switch answer {
            case let .started(count, start):
                var frames: [DecodedFrame] = []
                if let open = transfer { frames += abandon(open, because: "a new fetch started") }
                let fields: [String: JSONValue] = ["count": .number(Double(count)), "start": .number(Double(start.unixSeconds))]
                guard count > 0 else {
                    return frames + [DecodedFrame(.frame, "fetch: started, no data since then", meaning: meaning(.fetchControl, "started", value, fields))]
                }
                do {
                    transfer = Transfer(start: start, assembler: try HuamiFetchAssembler(count: count, format: format))
                } catch {
                    return frames + [failed(.fetchControl, "a start answer", value, error)]
                }
                let samples = Int(count) / format.size
                return frames + [DecodedFrame(.frame, "fetch: started, \(count) data byte(s) from \(start): \(samples) minute(s) of \(format.size)-byte samples\(formatSource)",
                                              meaning: meaning(.fetchControl, "started", value, fields))]
            case let .finished(crc):
                var fields: [String: JSONValue] = [:]
                if let crc { fields["crc32"] = .number(Double(crc)) }
                guard var open = transfer else {
                    return [DecodedFrame(.invalidMessage, "fetch: done, with no transfer started", meaning: meaning(.fetchControl, "finished", value, fields),
                                         fields: ["code": "noTransfer"])]
                }
                open.ended = true
                open.crc = crc
                transfer = open
                let said = DecodedFrame(.frame, "fetch: done\(crc.map { ", CRC-32 \(String($0, radix: 16))" } ?? "")", meaning: meaning(.fetchControl, "finished", value, fields))
                return open.assembler.isComplete ? [said, complete(open)] : [said]
            case .acknowledged:
                return [DecodedFrame(.frame, "fetch: acknowledgement taken", meaning: meaning(.fetchControl, "acknowledged", value))]
            case let .refused(opcode, status):
                if opcode != HuamiFetchRequest.acknowledgeOpcode { transfer = nil }
                return [DecodedFrame(.frame, "fetch: refused: \(answer.error?.message ?? "status \(hex(status))")",
                                     meaning: meaning(.fetchControl, "refused", value, ["opcode": .number(Double(opcode)), "status": .number(Double(status))]),
                                     fields: ["code": HuamiError.Code.fetchRefused.rawValue])]
            }
        }

        var formatSource: String {
            model.map { " (the \($0.advertisedNames[0])'s)" } ?? " (the band's name is unknown: the Mi Band 4's rules)"
        }

        mutating func dataPacket(_ value: [UInt8]) -> [DecodedFrame] {
            guard var open = transfer else {
                return [DecodedFrame(.garbage, "activity data: \(value.count) byte(s) with no fetch started", fields: ["bytes": value.count])]
            }
            let packet: HuamiDataPacket
            do { packet = try HuamiDataPacket(bytes: value) } catch { return [failed(.activityData, "a packet", value, error)] }
            let expected = open.nextCounter
            let inTurn = packet.counter == expected
            if inTurn {
                open.nextCounter &+= 1
                while open.ahead.remove(open.nextCounter) != nil { open.nextCounter &+= 1 }
            } else {
                open.ahead.insert(packet.counter)
            }
            do {
                try open.assembler.feed(value)
            } catch {
                transfer = nil
                return [failed(.activityData, "packet \(packet.counter)", value, error)]
            }
            transfer = open
            let progress = "\(open.assembler.data.count) of \(open.assembler.expectedBytes) byte(s) in order"
            let fields: [String: JSONValue] = ["counter": .number(Double(packet.counter)), "bytes": .number(Double(packet.data.count))]
            var frames: [DecodedFrame] = []
            if inTurn {
                frames.append(DecodedFrame(.frame, "activity data: packet \(packet.counter), \(packet.data.count) byte(s) (\(progress))",
                                           meaning: meaning(.activityData, "data", value, fields), fields: ["sequence": Int(packet.counter)]))
            } else {
                frames.append(DecodedFrame(.invalidMessage, "activity data: packet \(packet.counter) out of turn, \(expected) was next (put in order; \(progress))",
                                           meaning: meaning(.activityData, "data", value, fields), fields: ["sequence": Int(packet.counter), "code": "outOfOrder"]))
            }
            if open.ended, open.assembler.isComplete { frames.append(complete(open)) }
            return frames
        }

        /// A whole transfer: its samples, read into sleep items and heart rate as the central reads them.
        mutating func complete(_ open: Transfer) -> DecodedFrame {
            transfer = nil
            var decoded = Meaning(characteristic: Role.activityData.rawValue, command: "transfer", data: "")
            do {
                let data = try open.assembler.finish(crc32: open.crc, verifyCRC: true)
                let activity = try HuamiActivity(start: open.start, format: format, data: data)
                decoded.records = reader.read(activity)
                decoded.heartRate = activity.heartRates
                decoded.fields = ["start": .number(Double(activity.start)), "samples": .number(Double(activity.samples.count)),
                                  "sampleBytes": .number(Double(format.size))]
                let held = reader.held.map { " (and a \($0.stage) stretch from \($0.start) running into its end, shown with the next transfer or at the end)" } ?? ""
                return DecodedFrame(.frame, "activity data: transfer of \(activity.samples.count) minute(s) from \(open.start): "
                                    + "\(decoded.records?.count ?? 0) sleep item(s)\(held), \(decoded.heartRate?.count ?? 0) heart-rate minute(s)", meaning: decoded)
            } catch {
                return DecodedFrame(HuamiCaptureDecoder.verdict(error.code), "activity data: the transfer does not read (\(error.code.rawValue)): \(error.message)",
                                    meaning: decoded, fields: ["code": error.code.rawValue])
            }
        }

        mutating func abandon(_ open: Transfer, because reason: String) -> [DecodedFrame] {
            transfer = nil
            guard !(open.ended && open.assembler.isComplete) else { return [] }
            return [DecodedFrame(.corruptFrame, "activity data: \(open.assembler.abandoned().message) before \(reason)", meaning: "transferEndedEarly",
                                 fields: ["code": HuamiError.Code.transferEndedEarly.rawValue])]
        }

        func battery(_ value: [UInt8]) -> DecodedFrame {
            do {
                let battery = try HuamiBattery(bytes: value)
                let state = battery.state == 0 ? "" : battery.state == 1 ? ", charging" : ", state \(hex(battery.state))"
                return DecodedFrame(.frame, "battery: \(battery.level) %\(state)",
                                    meaning: meaning(.battery, "battery", value, ["level": .number(Double(battery.level)), "state": .number(Double(battery.state))]))
            } catch {
                return failed(.battery, "a reading", value, error)
            }
        }

        func clock(_ value: [UInt8], flow: CaptureFlow) -> DecodedFrame {
            do {
                let time = try HuamiTime(currentTimeBytes: value)
                let text = flow == .write ? "clock: set to \(time)" : "clock: the band's time is \(time)"
                return DecodedFrame(.frame, text, meaning: meaning(.currentTime, flow == .write ? "setTime" : "time", value,
                                                                   ["time": .number(Double(time.unixSeconds)), "zoneQuarterHours": .number(Double(time.zoneQuarterHours))]))
            } catch {
                return failed(.currentTime, "a time", value, error)
            }
        }

        mutating func heartRateCommand(_ value: [UInt8]) -> DecodedFrame {
            do {
                let command = try HuamiHeartRateCommand(bytes: value)
                measuring = true
                switch command {
                case let .interval(minutes):
                    return DecodedFrame(.frame, "heart rate: all-day measurement \(minutes == 0 ? "off" : "every \(minutes) min")",
                                        meaning: meaning(.heartRateControlPoint, "interval", value, ["minutes": .number(Double(minutes))]))
                case let .sleepMonitoring(on):
                    return DecodedFrame(.frame, "heart rate: measured during sleep \(on ? "on" : "off")",
                                        meaning: meaning(.heartRateControlPoint, "sleepMonitoring", value, ["enabled": .bool(on)]))
                case let .manualMeasurement(on):
                    return DecodedFrame(.frame, "heart rate: one measurement \(on ? "started" : "stopped")",
                                        meaning: meaning(.heartRateControlPoint, "manualMeasurement", value, ["enabled": .bool(on)]))
                }
            } catch {
                return failed(.heartRateControlPoint, "a command", value, error)
            }
        }

        /// Heart Rate Measurement (`2A37`): flags, then the rate in 8 or (flag 0x01) 16 bits. A value
        /// before any heart-rate command in the capture is shown but not counted as the band's:
        /// any notification of two bytes would read as one.
        func heartRateMeasurement(_ value: [UInt8]) -> DecodedFrame {
            guard let flags = value.first, value.count >= (flags & 0x01 == 0 ? 2 : 3) else {
                return DecodedFrame(.corruptFrame, "heart rate: a measurement of \(value.count) byte(s)", meaning: meaning(.heartRateMeasurement, "unreadable", value),
                                    fields: ["code": HuamiError.Code.tooShort.rawValue])
            }
            let bpm = flags & 0x01 == 0 ? Int(value[1]) : Int(value[1]) | Int(value[2]) << 8
            let decoded = meaning(.heartRateMeasurement, "measurement", value, ["bpm": .number(Double(bpm))])
            guard measuring else {
                return DecodedFrame(.garbage, "heart rate: \(bpm) bpm, before any heart-rate command in the capture", meaning: decoded, fields: ["bytes": value.count])
            }
            return DecodedFrame(.frame, "heart rate: \(bpm) bpm", meaning: decoded)
        }

        static func two(_ value: UInt8) -> String { value < 10 ? "0\(value)" : "\(value)" }
    }
}
