import Foundation
import Testing
import TSModels
import TSHuami

/// `protocol decode` in the huami dialect, at the codec: each characteristic's values read as
/// their step, the auth secrets never shown, a fetch's data packets assembled by counter into
/// samples and sleep, and damaged values (truncated at every length, split anywhere, random)
/// shown with a verdict other than `.frame`, never dropped, never a crash.
@Suite struct HuamiCaptureDecoderTests {
    static func channel(_ service: String, _ uuid: String) -> CaptureChannel { CaptureChannel(GATTCharacteristicID(service: service, uuid: uuid)) }
    static let auth = channel(HuamiGATT.secondService, HuamiGATT.auth)
    static let fetch = channel(HuamiGATT.service, HuamiGATT.fetchControl)
    static let data = channel(HuamiGATT.service, HuamiGATT.activityData)
    static let battery = channel(HuamiGATT.service, HuamiGATT.battery)
    static let clock = channel(HuamiGATT.service, HuamiGATT.currentTime)
    static let heartRateControl = channel("0000180d-0000-1000-8000-00805f9b34fb", HuamiGATT.heartRateControlPoint)
    static let heartRate = channel("0000180d-0000-1000-8000-00805f9b34fb", HuamiGATT.heartRateMeasurement)

    static let key: [UInt8] = Array(0x30..<0x40)
    static let random: [UInt8] = Array(0xA0..<0xB0)
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-03 00:00 UTC.
    static let start = HuamiTime(unixSeconds: 1_762_128_000, zone: zone)

    /// Eight minutes in 8-byte samples: two light, three deep, one REM, two awake (kind 1).
    static let samples: [HuamiSample] = [
        HuamiSample(kind: 120, heartRate: 55), HuamiSample(kind: 120, heartRate: 54), HuamiSample(kind: 120, deep: 60),
        HuamiSample(kind: 120, deep: 60), HuamiSample(kind: 120, deep: 60), HuamiSample(kind: 120, rem: 70),
        HuamiSample(kind: 1, heartRate: 70), HuamiSample(kind: 1),
    ]

    /// A Mi Band 5's connect and one transfer, as (value, channel, flow) in capture order.
    static func exchange() throws -> [([UInt8], CaptureChannel, CaptureFlow)] {
        let bytes = HuamiSample.encode(samples, format: .eightByte)
        let packets = HuamiDataPacket.packets(bytes, perPacket: 16)
        let encrypted = try HuamiAuthKey(bytes: key).answer(challenge: random, flags: .crypt).bytes
        var values: [([UInt8], CaptureChannel, CaptureFlow)] = [
            (HuamiAuthRequest.requestRandom(.crypt).bytes, auth, .write),
            (HuamiAuthAnswer.random(random).bytes(cryptFlags: 0x80), auth, .notification),
            (encrypted, auth, .write),
            (HuamiAuthAnswer.accepted.bytes(cryptFlags: 0x80), auth, .notification),
            (start.currentTimeBytes, clock, .write),
            ([0x00, 64, 1] + [UInt8](repeating: 0, count: 17), battery, .read),
            (HuamiFetchRequest.activity(since: 1_762_128_000, zone: zone).bytes, fetch, .write),
            (HuamiFetchAnswer.started(count: UInt32(bytes.count), start: start).bytes, fetch, .notification),
            (HuamiFetchRequest.fetchData.bytes, fetch, .write),
        ]
        // The second packet overtakes the first, as EATT may deliver them.
        values.append((packets[1].bytes, data, .notification))
        values.append((packets[0].bytes, data, .notification))
        for packet in packets.dropFirst(2) { values.append((packet.bytes, data, .notification)) }
        values += [
            (HuamiFetchAnswer.finished(crc32: CRC32.checksum(bytes)).bytes, fetch, .notification),
            (HuamiFetchRequest.acknowledge.bytes, fetch, .write),
            (HuamiFetchAnswer.acknowledged.bytes, fetch, .notification),
            (HuamiHeartRateCommand.manualMeasurement(true).bytes, heartRateControl, .write),
            ([0x00, 72], heartRate, .notification),
            (HuamiConfigRequest.setAlarm(HuamiAlarm(slot: 2, hour: 7, minute: 5)).bytes, .main, .write),
            (HuamiConfigAnswer.alarmSet(status: 1).bytes, .main, .notification),
        ]
        return values
    }

    static func decode(_ values: [([UInt8], CaptureChannel, CaptureFlow)], name: String? = "Mi Smart Band 5") -> [DecodedFrame] {
        var session = HuamiCaptureDecoder().session(started: nil, peripheralName: name)
        var frames: [DecodedFrame] = []
        for (value, channel, flow) in values { frames += session.append(value, channel: channel, flow: flow) }
        for channel in [auth, fetch, data, battery, clock, heartRateControl, heartRate, .main] {
            for flow in [CaptureFlow.write, .notification, .read] { frames += session.finish(channel: channel, flow: flow) }
        }
        return frames
    }

    static func json(_ frame: DecodedFrame) throws -> String {
        guard let meaning = frame.meaning else { return "" }
        return String(decoding: try JSONCoding.encoder().encode(Wrapped(meaning)), as: UTF8.self)
    }

    @Test func eachStepIsNamedAndTheTransferReadsIntoSleep() throws {
        let frames = Self.decode(try Self.exchange())
        let texts = frames.map(\.text)
        for step in ["auth: ask for a random number", "auth: the band's challenge", "auth: the encrypted random number", "auth: accepted",
                     "clock: set to 2025-11-03 01:00:00 +01:00", "battery: 64 %, charging", "fetch: start, data type 0x01 (activity) since",
                     "fetch: started, 64 data byte(s)", "fetch: send the data", "activity data: packet 0", "fetch: done, CRC-32",
                     "activity data: transfer of 8 minute(s)", "fetch: acknowledge", "fetch: acknowledgement taken",
                     "heart rate: one measurement started", "heart rate: 72 bpm", "configuration: set alarm slot 2 to 07:05", "configuration: alarm set"] {
            #expect(texts.contains { $0.hasPrefix(step) }, "no frame says \(step): \(texts)")
        }
        // The packet that overtook its predecessor is shown as out of turn; every other value is a frame.
        #expect(frames.filter { $0.verdict != .frame }.map(\.text) == ["activity data: packet 1 out of turn, 0 was next (put in order; 0 of 64 byte(s) in order)"])
        let transfer = try #require(frames.first { $0.text.hasPrefix("activity data: transfer") }?.meaning as? HuamiCaptureDecoder.Meaning)
        #expect(transfer.records == [SleepItem(stage: .light, start: 1_762_128_000, duration: 120), SleepItem(stage: .deep, start: 1_762_128_120, duration: 180),
                                     SleepItem(stage: .rem, start: 1_762_128_300, duration: 60)])
        #expect(transfer.heartRate?.map(\.bpm) == [55, 54, 70])
    }

    @Test func theKeyTheChallengeAndTheEncryptedNumberAreNeverShown() throws {
        var values = try Self.exchange()
        values.insert((HuamiAuthRequest.sendKey(authFlags: 0, key: try HuamiAuthKey(bytes: Self.key)).bytes, Self.auth, .write), at: 0)
        // A damaged answer still carries the random bytes: masked too.
        values.insert((HuamiAuthAnswer.random(Self.random).bytes(cryptFlags: 0x80).dropLast(), Self.auth, .notification), at: 1)
        let encrypted = try HuamiAuthKey(bytes: Self.key).answer(challenge: Self.random, flags: .crypt).bytes.dropFirst(2)
        let frames = Self.decode(values)
        #expect(frames.contains { $0.text.hasPrefix("auth: send the key") })
        for frame in frames {
            let shown = frame.text + (try Self.json(frame))
            for secret in [Self.key, Self.random, Array(encrypted)] {
                let hex = secret.map { String(format: "%02x", $0) }.joined()
                #expect(!shown.contains(hex) && !shown.contains(String(hex.prefix(8))), "\(shown)")
            }
        }
        #expect(frames.contains { (try? Self.json($0))?.contains("(16 byte(s) masked)") == true })
    }

    @Test func withoutTheBandsNameSamplesAreReadAsTheMiBand4s() throws {
        let frames = Self.decode(try Self.exchange(), name: nil)
        #expect(frames.contains { $0.text.contains("4-byte samples (the band's name is unknown: the Mi Band 4's rules)") })
    }

    @Test func aTransferThatStopsAndDataWithNoFetchAreShownNotDropped() throws {
        var values = try Self.exchange()
        let last = try #require(values.lastIndex { $0.1 == Self.data })
        values.remove(at: last)
        let frames = Self.decode(values)
        #expect(frames.contains { $0.verdict == .corruptFrame && $0.text.contains("the transfer stopped after 48 of the 64 data bytes") })
        let stray = Self.decode([([0x00, 1, 2, 3], Self.data, .notification)])
        #expect(stray.map(\.verdict) == [.garbage])
        let unknown = Self.decode([([0x77, 0x01], Self.fetch, .write), ([0x10, 0x02], Self.auth, .notification), ([0x10, 0x01, 0x01, 0x00], Self.fetch, .notification)])
        #expect(unknown.map(\.verdict) == [.garbage, .corruptFrame, .corruptFrame], "\(unknown.map(\.text))")
    }

    /// Every value of the exchange cut at every length and split in two at every byte, then random
    /// values on every characteristic and direction: each yields at least one decoded frame with a
    /// text (nothing dropped), and no cut value of a fixed-length step passes as a frame.
    @Test func truncatedSplitAndRandomValuesAreShownNeverDroppedNeverACrash() throws {
        let values = try Self.exchange()
        let channels = [Self.auth, Self.fetch, Self.data, Self.battery, Self.clock, Self.heartRateControl, Self.heartRate, CaptureChannel.main, .second]
        var session = HuamiCaptureDecoder().session(started: nil, peripheralName: "Mi Smart Band 5")
        for (value, channel, flow) in values {
            for cut in 0..<value.count {
                let frames = session.append(Array(value.prefix(cut)), channel: channel, flow: flow)
                #expect(!frames.isEmpty && frames.allSatisfy { !$0.text.isEmpty })
                // Auth steps, the clock and the fetch start have one length: any shorter is not the step.
                if [Self.auth, Self.clock].contains(channel) || (channel == Self.fetch && flow == .write && value.count > 1) {
                    #expect(frames.allSatisfy { $0.verdict != .frame }, "\(Array(value.prefix(cut))) on \(channel): \(frames.map(\.text))")
                }
            }
            for split in 1..<max(value.count, 2) {
                for part in [Array(value.prefix(split)), Array(value.dropFirst(split))] {
                    #expect(!session.append(part, channel: channel, flow: flow).isEmpty)
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let length = Int.random(in: 0...40, using: &generator)
            var value = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half of them look like answers, so the answer paths see damage too.
            if length >= 2, Bool.random(using: &generator) { value[0] = 0x10; value[1] = UInt8.random(in: 0...4, using: &generator) }
            let channel = channels.randomElement(using: &generator)!
            let flow = [CaptureFlow.write, .notification, .read].randomElement(using: &generator)!
            #expect(!session.append(value, channel: channel, flow: flow).isEmpty)
        }
        for channel in channels { for flow in [CaptureFlow.write, .notification, .read] { _ = session.finish(channel: channel, flow: flow) } }
    }
}

private struct Wrapped: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
