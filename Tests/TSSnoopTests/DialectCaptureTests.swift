import Foundation
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSProtocol
import TSSnoop
import TSTransport

/// Every dialect whose frames go over its profile's write/notify pairs (v1, NPK, QRing): its
/// simulated watch's sync recorded with the capturing transport, written as the HCI traffic a
/// controller shows (with or without the GATT discovery of the dialect's profile), stored as
/// btsnoop, found again by the dialect's registration alone, decoded frame by frame, and replayed
/// through the dialect's real central. Huami's band speaks over characteristics addressed by
/// service and UUID beyond its pair, which this builder does not lay out: `HuamiCaptureTests`
/// takes its sync through the same path; every registered family's recorded sync also replays
/// and decodes in `FamilyConformanceTests`.
@Suite(.serialized) struct DialectCaptureTests {
    static let now = Date(timeIntervalSince1970: 1_762_156_800)
    // The zone the central sets a ring's clock in and the capture decoder reads it in: this machine's.
    static let zone = TimeZone.current
    static let watchAddress = BluetoothAddress("C0:FF:EE:00:00:01")!
    /// Every family with a simulated device whose exchange goes over its pairs only (a band's
    /// characteristics are HuamiCaptureTests').
    static let dialects: [Dialect] = WatchFamilies.builtIn
        .filter { $0.simulated != nil && $0.dialect.capturable?.profile.characteristics.isEmpty == true }.map(\.name)
    static let from = Int64(now.timeIntervalSince1970) - 3 * 86400

    struct Recorded {
        var dialect: WatchDialect
        var entries: [CaptureEntry]
        var records: [SleepItem]
    }

    static func configuration() -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { now }
        configuration.requestTimeout = .seconds(2)
        configuration.pageIdleTimeout = .seconds(2)
        return configuration
    }

    /// The simulated watches these suites record: seed 7, 3 days of history up to `now` in `zone`.
    static func threeDays(in zone: TimeZone = zone, until now: Date = now) -> SimulatedWatchOptions {
        var options = SimulatedWatchOptions()
        options.seed = 7
        options.timeZone = zone
        options.now = now
        options.historyDays = 3
        return options
    }

    /// The dialect's simulated watch, 3 days of history, synced from 3 days back over the capturing transport.
    static func recordSync(_ name: Dialect) async throws -> Recorded {
        let options = threeDays()
        let family = try WatchFamilies.named(name)
        let link = try #require(family.simulated).open(options)
        let recording = RecordingTransport(recording: link.transport)
        let central = family.dialect.makeCentral(recording, configuration())
        try await central.connect()
        let records = try await central.allSleepRecords(start: from, end: nil)
        await central.disconnect()
        return Recorded(dialect: family.dialect, entries: await recording.entries(), records: records)
    }

    /// Value handles of the profile's characteristics: write, notify, then the second pair's.
    static func handles(_ profile: GATTProfile) -> [(uuid: String, handle: UInt16, channel: CaptureChannel, flow: CaptureFlow)] {
        var roles = [(profile.writeCharacteristic, CaptureChannel.main, CaptureFlow.write), (profile.notifyCharacteristic, .main, .notification)]
        if let second = profile.secondChannel { roles += [(second.writeCharacteristic, .second, .write), (second.notifyCharacteristic, .second, .notification)] }
        return roles.enumerated().map { (uuid: $1.0, handle: UInt16(0x002A + 3 * $0), channel: $1.1, flow: $1.2) }
    }

    static func isShort(_ uuid: String) -> Bool { uuid.lowercased().hasSuffix("-0000-1000-8000-00805f9b34fb") && uuid.hasPrefix("0000") }

    /// The HCI packets of the recorded links as the central's controller saw them: each recorded
    /// connection a link on the same handle (a controller gives the next link the handle the last
    /// one left), the GATT discovery on the first only (BlueZ caches it).
    static func packets(_ recorded: Recorded, discovery: Bool, step: Int64 = 1250) throws -> [HCIPacket] {
        let profile = try #require(recorded.dialect.gatt)
        let roles = handles(profile)
        var link = HCIBuilder()
        link.step = step
        link.newIndex(address: BluetoothAddress("00:AA:01:00:00:00")!)
        var connected = false
        func connect() {
            link.connectionComplete(peer: watchAddress)
            link.att([0x02] + le16(247), sent: true)
            link.att([0x03] + le16(247), sent: false)
            connected = true
        }
        connect()
        if discovery {
            link.att([0x10] + le16(1) + le16(0xFFFF) + le16(0x2800), sent: true)
            link.att([0x11, 20] + le16(0x0028) + le16(0x0040) + attUUID(profile.service), sent: false)
            link.att([0x08] + le16(0x0028) + le16(0x0040) + le16(0x2803), sent: true)
            // Declarations of 128-bit and of 16-bit characteristics come in responses of their own sizes.
            let long = roles.filter { !isShort($0.uuid) }, short = roles.filter { isShort($0.uuid) }
            func declaration(_ handle: UInt16, _ uuid: [UInt8]) -> [UInt8] {
                let properties: [UInt8] = [0x1C]
                return le16(handle - 1) + properties + le16(handle) + uuid
            }
            if !long.isEmpty {
                let entries: [UInt8] = long.flatMap { declaration($0.handle, attUUID($0.uuid)) }
                link.att([0x09, 21] + entries, sent: false)
            }
            if !short.isEmpty {
                let entries: [UInt8] = short.flatMap { declaration($0.handle, Array(attUUID($0.uuid)[12..<14])) }
                link.att([0x09, 7] + entries, sent: false)
            }
        }
        // The capture shows who closed the link: the host's HCI Disconnect when the recording's
        // central closed it (its completion's reason is the command's under btvirt, as here, and
        // "local host terminated" on a real controller), which a replay leaves up until the
        // central closes it again; a close of the watch's comes after the notifications before it.
        var opens = 0
        for entry in recorded.entries where entry.characteristic == nil {
            let flow: CaptureFlow
            switch entry.direction {
            case .write: flow = .write
            case .notification: flow = .notification
            case .open:
                opens += 1
                if opens > 1 {
                    if connected { link.disconnectionComplete(reason: 0x16) }
                    connect()
                }
                continue
            case .disconnected:
                if connected {
                    if entry.byCentral == true { link.disconnectCommand() }
                    link.disconnectionComplete(reason: 0x13)
                }
                connected = false
                continue
            case .read: continue
            }
            let handle = try #require(roles.first { $0.channel == entry.pair && $0.flow == flow }).handle
            let opcode: UInt8 = flow == .write ? 0x52 : 0x1B
            link.att([opcode] + le16(handle) + entry.bytes, sent: flow == .write)
        }
        if connected { link.disconnectionComplete(reason: 0x13) }
        return link.packets
    }

    static func btsnoop(_ packets: [HCIPacket]) -> [UInt8] { BTSnoop.encode(datalink: .monitor, records: packets.map(\.monitorRecord)) }

    static func exchange(_ recorded: Recorded, in bytes: [UInt8]) throws -> CapturedExchange {
        let (profile, decoder) = try #require(recorded.dialect.capturable)
        return CapturedExchange(traffic: try CapturedExchange.traffic(btsnoop: bytes), profile: profile, decoder: decoder)
    }

    /// Every frame the dialect's decoder reads in the exchange, then what each stream left.
    static func decoded(_ exchange: CapturedExchange, by dialect: WatchDialect) throws -> [DecodedFrame] {
        let (_, decoder) = try #require(dialect.capturable)
        var session = decoder.session(started: now)
        var frames: [DecodedFrame] = []
        for value in exchange.values { frames += session.append(value.bytes, channel: value.channel, flow: value.flow) }
        for channel in CaptureChannel.pairs { for flow in [CaptureFlow.write, .notification] { frames += session.finish(channel: channel, flow: flow) } }
        return frames
    }

    @Test(arguments: DialectCaptureTests.dialects)
    func aSyncReplaysFromItsRecordingToTheSameRecords(dialect: Dialect) async throws {
        let recorded = try await Self.recordSync(dialect)
        #expect(!recorded.records.isEmpty)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(dialect)-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try CaptureFile.write(recorded.entries, to: file)
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: try CaptureFile.read(from: file)), Self.configuration())
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: Self.from, end: nil) == recorded.records)
    }

    @Test(arguments: DialectCaptureTests.dialects, [false, true])
    func aSyncComesBackFromItsBTSnoopAndReplaysToTheSameRecords(dialect: Dialect, discovery: Bool) async throws {
        let recorded = try await Self.recordSync(dialect)
        let exchange = try Self.exchange(recorded, in: Self.btsnoop(try Self.packets(recorded, discovery: discovery)))
        #expect(exchange.handleSource == (discovery ? .discovery : .frames))
        #expect(exchange.discoveredService == discovery)
        let own = recorded.entries.filter { ($0.direction == .write || $0.direction == .notification) && $0.characteristic == nil }
        #expect(exchange.values.map(\.bytes) == own.map(\.bytes))
        #expect(exchange.values.map(\.channel) == own.map(\.pair))
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: exchange.captureEntries), Self.configuration())
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: Self.from, end: nil) == recorded.records)
    }

    /// Without a discovery, no other dialect's decoder takes a handle of this dialect's sync for its
    /// own: the handles are found by the frames they carry, and a stream of another dialect's frames
    /// is not one that happens to pass a lax check (a v1 sync over EATT was once decoded as a Huami
    /// band's battery readings, docs/testing.md).
    @Test(arguments: DialectCaptureTests.dialects)
    func withoutADiscoveryNoOtherDialectTakesTheSyncsHandles(dialect: Dialect) async throws {
        let recorded = try await Self.recordSync(dialect)
        let traffic = try CapturedExchange.traffic(btsnoop: Self.btsnoop(try Self.packets(recorded, discovery: false)))
        for other in WatchFamilies.dialects where other.name != dialect {
            guard let (profile, decoder) = other.capturable else { continue }
            let exchange = CapturedExchange(traffic: traffic, profile: profile, decoder: decoder)
            #expect(exchange.values.count == 0,
                    "\(other.name) took handle(s) \(exchange.writeHandles.union(exchange.notifyHandles).sorted()) of a \(dialect) sync (\(exchange.values.count) value(s))")
        }
    }

    @Test(arguments: DialectCaptureTests.dialects)
    func theDecoderReadsTheSyncsSleepRecordsAndKeepsEveryFrame(dialect: Dialect) async throws {
        let recorded = try await Self.recordSync(dialect)
        let exchange = try Self.exchange(recorded, in: Self.btsnoop(try Self.packets(recorded, discovery: true)))
        let frames = try Self.decoded(exchange, by: recorded.dialect)
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0.verdict == .frame }, "\(frames.filter { $0.verdict != .frame }.map(\.text))")
        let encoder = JSONCoding.encoder()
        let decoded = try frames.compactMap(\.meaning).flatMap { meaning -> [SleepItem] in
            let object = try JSONSerialization.jsonObject(with: try encoder.encode(AnyMeaning(meaning)))
            return try Self.sleepItems(in: object)
        }
        #expect(Set(decoded.filter { $0.start >= Self.from }) == Set(recorded.records))
    }

    /// A frame damaged in the capture is shown as failing its checks, and the frames around it still decode.
    @Test(arguments: DialectCaptureTests.dialects)
    func aDamagedFrameIsShownNotDropped(dialect: Dialect) async throws {
        let recorded = try await Self.recordSync(dialect)
        var damaged = recorded
        let index = try #require(damaged.entries.lastIndex { $0.direction == .notification && $0.pair == .main && $0.bytes.count >= 12 })
        var bytes = damaged.entries[index].bytes
        bytes[bytes.count - 1] ^= 0x5A
        damaged.entries[index] = CaptureEntry(time: damaged.entries[index].time, direction: .notification, bytes: bytes)
        let exchange = try Self.exchange(damaged, in: Self.btsnoop(try Self.packets(damaged, discovery: true)))
        let frames = try Self.decoded(exchange, by: recorded.dialect)
        #expect(frames.contains { $0.verdict == .corruptFrame || $0.verdict == .invalidMessage })
        #expect(frames.filter { $0.verdict == .frame }.count >= 2)
    }

    /// Sleep items wherever a meaning holds them: v1's `body.records`, NPK's and QRing's `records`.
    static func sleepItems(in object: Any) throws -> [SleepItem] {
        guard let dictionary = object as? [String: Any] else { return [] }
        var items: [SleepItem] = []
        if let records = dictionary["records"] as? [Any] {
            items += try JSONDecoder().decode([SleepItem].self, from: JSONSerialization.data(withJSONObject: records))
        }
        if let body = dictionary["body"] { items += try sleepItems(in: body) }
        return items
    }
}

private struct AnyMeaning: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
