import Foundation
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSSnoop
import TSTestSupport
import TSTransport

/// A Huami band's sync, which goes over eight characteristics of three services rather than one
/// write/notify pair: recorded from the simulated band over the loopback with the capturing
/// transport, replayed through the real Huami central; written as the HCI traffic a controller
/// shows (the GATT discovery, the GAP Device Name read, writes, notifications and reads), found
/// by `protocol decode --btsnoop`, written with `--to-capture`, and that file replayed through
/// the central again: each time the sleep records the live run stored.
@Suite(.serialized) struct HuamiCaptureTests {
    typealias D = DialectCaptureTests
    static let huami = Dialect(rawValue: "huami")

    struct Recorded {
        var dialect: WatchDialect
        var entries: [CaptureEntry]
        var records: [SleepItem]
        var secret: PairingSecret
        var name: String
    }

    static func configuration(_ secret: PairingSecret) -> WatchConfiguration {
        var configuration = D.configuration()
        configuration.pairingSecret = secret
        return configuration
    }

    /// The simulated band (a Mi Band 5), 3 days of history, synced from 3 days back over the capturing transport.
    static func recordSync() async throws -> Recorded {
        let options = D.threeDays()
        let family = try WatchFamilies.named(huami)
        let link = try #require(family.simulated).open(options)
        let secret = try #require(link.pairingSecret)
        let recording = RecordingTransport(recording: link.transport)
        let central = family.dialect.makeCentral(recording, configuration(secret))
        try await central.connect()
        let records = try await central.allSleepRecords(start: D.from, end: nil)
        await central.disconnect()
        let entries = await recording.entries()
        let name = try #require(entries.first?.name)
        return Recorded(dialect: family.dialect, entries: entries, records: records, secret: secret, name: name)
    }

    /// One value handle per characteristic: the configuration pair's, then the profile's others in its order.
    static func handles(_ profile: GATTProfile) -> [(uuid: String, handle: UInt16, channel: CaptureChannel)] {
        [(profile.writeCharacteristic, UInt16(0x0010), CaptureChannel.main)]
            + profile.characteristics.enumerated().map { ($1.uuid, UInt16(0x0013 + 3 * $0), CaptureChannel($1)) }
    }

    static let nameHandle: UInt16 = 0x0003

    static func isShort(_ uuid: String) -> Bool { D.isShort(uuid) }

    /// The HCI packets of the recorded link as the central's controller saw them: BlueZ discovers
    /// the attributes and reads the Device Name, then the central's writes (requests, answered),
    /// the band's notifications and the reads of its characteristics.
    /// Each recorded connection is a link on the same handle; the discovery and the name read are the first link's.
    static func packets(_ recorded: Recorded, nameRead: Bool = true, step: Int64 = 1250) throws -> [HCIPacket] {
        let profile = try #require(recorded.dialect.gatt)
        let attributes = handles(profile)
        var link = HCIBuilder()
        link.step = step
        link.newIndex(address: BluetoothAddress("00:AA:01:00:00:00")!)
        var connected = false
        func connect() {
            link.connectionComplete(peer: D.watchAddress)
            link.att([0x02] + le16(247), sent: true)
            link.att([0x03] + le16(247), sent: false)
            connected = true
        }
        connect()
        link.att([0x10] + le16(1) + le16(0xFFFF) + le16(0x2800), sent: true)
        link.att([0x11, 6] + le16(0x0001) + le16(0x0005) + [0x00, 0x18] + le16(0x000E) + le16(0x0040) + [0xE0, 0xFE], sent: false)
        link.att([0x08] + le16(0x0001) + le16(0x0040) + le16(0x2803), sent: true)
        func declaration(_ handle: UInt16, _ uuid: [UInt8]) -> [UInt8] { le16(handle - 1) + [0x1A] + le16(handle) + uuid }
        let long = attributes.filter { !isShort($0.uuid) }, short = attributes.filter { isShort($0.uuid) }
        link.att([0x09, 21] + long.flatMap { declaration($0.handle, attUUID($0.uuid)) }, sent: false)
        link.att([0x09, 7] + declaration(nameHandle, [0x00, 0x2A]) + short.flatMap { declaration($0.handle, Array(attUUID($0.uuid)[12..<14])) }, sent: false)
        if nameRead {
            link.att([0x0A] + le16(nameHandle), sent: true)
            link.att([0x0B] + Array(recorded.name.utf8), sent: false)
        }
        var opens = 0
        for entry in recorded.entries where entry.characteristic == nil {
            if entry.direction == .open {
                opens += 1
                if opens > 1 {
                    if connected { link.disconnectionComplete(reason: 0x16) }
                    connect()
                }
            } else if entry.direction == .disconnected {
                if connected { link.disconnectionComplete(reason: entry.byCentral == true ? 0x16 : 0x13) }
                connected = false
            }
            guard entry.direction == .write || entry.direction == .notification || entry.direction == .read else { continue }
            let handle = try #require(attributes.first { $0.channel == entry.pair }).handle
            switch entry.direction {
            case .write:
                link.att([0x12] + le16(handle) + entry.bytes, sent: true)
                link.att([0x13], sent: false)
            case .read:
                link.att([0x0A] + le16(handle), sent: true)
                link.att([0x0B] + entry.bytes, sent: false)
            default:
                link.att([0x1B] + le16(handle) + entry.bytes, sent: false)
            }
        }
        // The central closes the link once the sync is done.
        if connected { link.disconnectionComplete(reason: 0x16) }
        return link.packets
    }

    /// What the central recorded on the band's own characteristics (standard Device Information reads aside).
    static func own(_ entries: [CaptureEntry]) -> [CaptureEntry] {
        entries.filter { [.write, .notification, .read].contains($0.direction) && $0.characteristic == nil }
    }

    @Test func aSyncReplaysFromItsRecordingToTheSameRecords() async throws {
        let recorded = try await Self.recordSync()
        #expect(!recorded.records.isEmpty)
        #expect(Set(recorded.entries.compactMap { $0.channel?.characteristic?.uuid }).count >= 4, "auth, fetch control, data, clock or battery")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("capture-huami-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try CaptureFile.write(recorded.entries, to: file)
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: try CaptureFile.read(from: file)), Self.configuration(recorded.secret))
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: D.from, end: nil) == recorded.records)
    }

    @Test func aSyncComesBackFromItsBTSnoopWithItsNameAndEveryCharacteristic() async throws {
        let recorded = try await Self.recordSync()
        let (profile, decoder) = try #require(recorded.dialect.capturable)
        let exchange = CapturedExchange(traffic: try CapturedExchange.traffic(btsnoop: D.btsnoop(try Self.packets(recorded))), profile: profile, decoder: decoder)
        #expect(exchange.handleSource == .discovery)
        #expect(exchange.values.map(\.bytes) == Self.own(recorded.entries).map(\.bytes))
        #expect(exchange.values.map(\.channel) == Self.own(recorded.entries).map(\.pair))
        #expect(exchange.values.map(\.direction) == Self.own(recorded.entries).map(\.direction))
        #expect(exchange.peripheralNames.values.first == recorded.name)
        #expect(exchange.captureEntries.last?.byCentral == true)
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: exchange.captureEntries), Self.configuration(recorded.secret))
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: D.from, end: nil) == recorded.records)
    }

    /// The to-capture path as a person runs it: `protocol decode --btsnoop FILE --to-capture OUT
    /// --json` finds the huami dialect by its service, names each step, masks the auth secrets;
    /// OUT replays through the Huami central to the records the live run stored.
    @Test func decodeNamesEachStepAndItsCaptureReplaysToTheSameRecords() async throws {
        let recorded = try await Self.recordSync()
        let cli = try CLI()
        defer { cli.cleanUp() }
        let snoop = cli.home.appendingPathComponent("huami.btsnoop")
        try Data(D.btsnoop(try Self.packets(recorded))).write(to: snoop)
        let out = cli.home.appendingPathComponent("huami.jsonl")
        let text = try await cli.runDetached(["protocol", "decode", "--btsnoop", snoop.path, "--to-capture", out.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("dialect huami: its service 0000fee0-0000-1000-8000-00805f9b34fb found by the capture's GATT discovery"), "\(text.stdout)")
        for step in ["auth: ask for a random number", "auth: the band's challenge (16 random bytes, masked)", "auth: the encrypted random number (masked)",
                     "auth: accepted", "clock: set to", "clock: the band's time is", "fetch: start, data type 0x01 (activity)",
                     "fetch: started,", "of 8-byte samples (the Mi Smart Band 5's)", "fetch: send the data", "activity data: packet 0,",
                     "fetch: done", "activity data: transfer of"] {
            #expect(text.stdout.contains(step), "no line says \(step)")
        }
        #expect(!text.stdout.contains("corrupt frame") && !text.stdout.contains("skipped"), "\(text.stdout)")
        let key = recorded.secret.text.lowercased()
        #expect(!text.stdout.contains(key) && !text.stdout.contains(String(key.prefix(8))))

        let json = try await cli.runDetached(["protocol", "decode", "--btsnoop", snoop.path, "--json"])
        let objects = try json.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.allSatisfy { $0["dialect"] as? String == "huami" && $0["type"] as? String == "frame" })
        let characteristics = Set(objects.compactMap { ($0["message"] as? [String: Any])?["characteristic"] as? String })
        #expect(characteristics.isSuperset(of: ["auth", "currentTime", "fetchControl", "activityData"]), "\(characteristics)")
        let decoded = try objects.compactMap { $0["message"] }.flatMap { try D.sleepItems(in: $0) }
        #expect(!decoded.isEmpty)

        let attributes = try FileManager.default.attributesOfItem(atPath: out.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let entries = try CaptureFile.read(from: out)
        #expect(entries.first?.name == recorded.name)
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: entries), Self.configuration(recorded.secret))
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: D.from, end: nil) == recorded.records)
    }

    /// BlueZ reads a known band's name from its cache, so a capture may not hold it: the decode
    /// says which rules it read the samples by, and `--name` gives the model to the decode and the replay.
    @Test func aCaptureWithoutTheBandsNameTakesItFromName() async throws {
        let recorded = try await Self.recordSync()
        let cli = try CLI()
        defer { cli.cleanUp() }
        let snoop = cli.home.appendingPathComponent("huami.btsnoop")
        try Data(D.btsnoop(try Self.packets(recorded, nameRead: false))).write(to: snoop)
        let nameless = try await cli.runDetached(["protocol", "decode", "--btsnoop", snoop.path])
        #expect(nameless.stdout.contains("4-byte samples (the band's name is unknown: the Mi Band 4's rules)"), "\(nameless.stdout)")
        let out = cli.home.appendingPathComponent("huami.jsonl")
        let named = try await cli.runDetached(["protocol", "decode", "--btsnoop", snoop.path, "--name", recorded.name, "--to-capture", out.path])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("of 8-byte samples (the Mi Smart Band 5's)"))
        #expect(!named.stdout.contains("corrupt frame"), "\(named.stdout)")
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: try CaptureFile.read(from: out)), Self.configuration(recorded.secret))
        try await replayed.connect()
        #expect(try await replayed.allSleepRecords(start: D.from, end: nil) == recorded.records)
    }

    /// A Huami capture is another dialect's to `--dialect qring`; a replay that writes other bytes than recorded says so.
    @Test func aHuamiCaptureAskedAsAnotherDialectAndAWrongReplayAreClearErrors() async throws {
        let recorded = try await Self.recordSync()
        let cli = try CLI()
        defer { cli.cleanUp() }
        let snoop = cli.home.appendingPathComponent("huami.btsnoop")
        try Data(D.btsnoop(try Self.packets(recorded))).write(to: snoop)
        let asQRing = try await cli.runDetached(["protocol", "decode", "--btsnoop", snoop.path, "--dialect", "qring"])
        #expect(asQRing.status == 64)
        #expect(asQRing.stderr.contains("carries the huami dialect's exchange"), "\(asQRing.stderr)")
        #expect(asQRing.stderr.contains("--dialect huami"))

        let otherKey = PairingSecret(key: recorded.secret.key, text: String(recorded.secret.text.reversed()))
        let replayed = recorded.dialect.makeCentral(ReplayTransport(capture: recorded.entries), Self.configuration(otherKey))
        await #expect(throws: (any Error).self) { try await replayed.connect() }
    }
}
