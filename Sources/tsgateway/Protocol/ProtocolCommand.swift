import ArgumentParser
import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSFiles
import TSGATT
import TSModels
import TSProtocol
import TSSnoop
import TSTransport

struct ProtocolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "protocol",
        abstract: "Decode any dialect's frames and captures; encode wire-protocol v1 frames (for captures and firmware work).",
        discussion: "Protocol v1 is specified in protocol-spec/v1/wire-protocol.md, the other dialects in protocol-spec/.",
        subcommands: [Decode.self, Encode.self, Replay.self]
    )
}

extension ProtocolCommand {
    struct Decode: ParsableCommand {
        /// The dialects whose exchange a capture can hold, from their registrations, comma-separated.
        static var decodable: String { WatchFamilies.dialects.filter { $0.capturable != nil }.map(\.name.rawValue).joined(separator: ", ") }

        static let configuration = CommandConfiguration(
            abstract: "Decode a captured byte stream or HCI capture into frames and their meaning, in any dialect.",
            discussion: """
                Give the bytes as hex, in arguments or on standard input; spaces, colons and \
                line breaks are ignored, so btmon or Wireshark dumps can be pasted as they are. \
                The bytes go through the dialect's own reassembler (--dialect, default v1): garbage \
                is skipped, a frame that fails its checks is shown as such and scanning goes on. \
                Without --from they are read as the watch's and as the central's, and shown the \
                way more of them parse (the first line says which). A ring's clock is read in \
                --time-zone (default: this machine's zone).

                With --btsnoop, the watch exchange of an HCI capture (tsgateway capture, btmon -w, \
                Android's HCI snoop log) is decoded in whichever dialect it carries \
                (\(Self.decodable)): the dialect whose service the capture's GATT discovery found, else the one \
                whose frames its handles carry, or the one --dialect names. ATT writes to the \
                dialect's write characteristics, notifications of its notify characteristics and, \
                for a dialect that speaks over more characteristics (huami), reads of them are \
                reassembled (L2CAP fragments, EATT channels, frames) and each frame printed with \
                its meaning: command, fields, sleep items, heart rate, alarms. Auth keys and \
                challenges are masked. --to-capture writes the exchange as a capture \
                `ReplayTransport` plays to that dialect's central (`tsgateway protocol replay`).

                Example:
                  tsgateway protocol decode a5 01 00 01 02 00 00 00 0e dc 91 b6
                  tsgateway protocol decode --dialect qring 03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 03
                  tsgateway protocol decode --dialect npk ab0621000012269900040a062f6d7573696310e1de92a50918b0ba1f
                  tsgateway protocol decode --dialect qring --time-zone Asia/Tokyo \\
                    15001805000000000000000000000032 150180adb6660000000000000000005f
                  tsgateway protocol decode --dialect huami --characteristic 0004 10 02 01
                  tsgateway protocol decode --btsnoop sync.btsnoop --json
                """
        )

        @Argument(help: "Hex bytes of the stream (default: read standard input).")
        var hex: [String] = []

        @Flag(help: "Print one JSON object per frame or problem (schema in docs/cli.md, \"protocol decode --json\").")
        var json = false

        @Option(help: ArgumentHelp("The dialect of the bytes (\(DialectChoice.list)); with --btsnoop, default: the one the capture carries.",
                                   valueName: "dialect"), transform: DialectChoice.parse)
        var dialect: Dialect?

        @Option(help: ArgumentHelp("For hex bytes: which way they went, watch (notifications), central (writes) or read (a value the central read); default: the way they parse, watch or central, which the output says.", valueName: "side"))
        var from: StreamSide?

        @Option(help: ArgumentHelp("The zone the watch's clock runs in, for a dialect that dates what it sends by its local clock (qring); default: this machine's, e.g. Europe/Berlin.", valueName: "zone"))
        var timeZone: String?

        @Flag(help: "For hex bytes: they went over the dialect's second pair (QRing's big-data service).")
        var secondPair = false

        @Option(help: ArgumentHelp("For hex bytes: the characteristic they went over, for a dialect that speaks over more than its pairs (huami): its UUID, or the 4 hex digits that tell it apart (0009 auth, 0004 fetch control, 0005 activity data, 0006 battery, 2a2b clock, 2a39/2a37 heart rate).",
                                   valueName: "uuid"))
        var characteristic: String?

        @Option(help: ArgumentHelp("The name the watch gives itself, where the bytes do not say it (a capture without a read of its GAP Device Name: BlueZ reads a known watch's name from its cache). A Huami band's model, and so the size of its samples, comes from it; --to-capture keeps it for the replay.",
                                   valueName: "NAME"))
        var name: String?

        @Option(help: ArgumentHelp("Decode the watch exchange of this btsnoop capture.", valueName: "FILE"))
        var btsnoop: String?

        @Option(help: ArgumentHelp("With --btsnoop: also write the exchange as a replayable capture (JSON lines, 0600).", valueName: "FILE"))
        var toCapture: String?

        func validate() throws {
            if btsnoop != nil, !hex.isEmpty { throw ValidationError("give either hex bytes or --btsnoop, not both") }
            if toCapture != nil, btsnoop == nil { throw ValidationError("--to-capture needs --btsnoop") }
            if characteristic != nil, secondPair { throw ValidationError("give either --second-pair or --characteristic, not both") }
            if characteristic != nil, btsnoop != nil { throw ValidationError("--characteristic is for hex bytes; a capture says which characteristic each value went over") }
            if from != nil, btsnoop != nil { throw ValidationError("--from is for hex bytes; a capture says which way each value went") }
        }

        func run() throws {
            if let btsnoop { return try decodeCapture(btsnoop) }
            let text = hex.isEmpty ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : hex.joined(separator: " ")
            let bytes = try HexInput.parse(text)
            let chosen = try WatchFamilies.dialect(named: dialect ?? Dialect.fallback)
            guard let decoder = try chosen.captureDecoder?.reading(clockIn: try clockZone()) else {
                throw CLIFailure("the \(chosen.name) dialect has no frames of its own to decode; use one of \(CapturedDialect.names)", status: .usage)
            }
            let channel = try pastedChannel(chosen)
            func decoded(_ side: StreamSide) -> [DecodedFrame] {
                var session = decoder.session(started: nil, peripheralName: name)
                return session.append(bytes, channel: channel, flow: side.flow) + session.finish(channel: channel, flow: side.flow)
            }
            var printer = DecodePrinter(json: json, dialect: chosen.name)
            let (side, frames) = from.map { ($0, decoded($0)) } ?? StreamSide.parsedBest(by: decoded)
            if from == nil, frames.contains(where: \.isFrame) {
                printer.direction = side.flow.rawValue
                let note = "the bytes parse as \(side.whose); \(side.other.flag) reads them as \(side.other.whose)"
                if json { FileHandle.standardError.write(Data("tsgateway: \(note)\n".utf8)) } else { print(note) }
            }
            for frame in frames { try printer.print(frame) }
            if printer.frames == 0 {
                throw CLIFailure("no \(chosen.name) frame found in \(bytes.count) byte(s)\(chosen.name == Dialect.fallback ? "; a frame starts with a5 01" : ""); is --dialect right?", status: .dataError)
            }
        }
    }

    /// Which way pasted bytes went.
    enum StreamSide: String, ExpressibleByArgument, CaseIterable {
        case watch, central, read

        var flow: CaptureFlow {
            switch self {
            case .watch: .notification
            case .central: .write
            case .read: .read
            }
        }

        var whose: String { self == .central ? "the central's (a write, central → watch)" : "the watch's (\(self == .read ? "a read" : "a notification"), watch → central)" }
        var other: StreamSide { self == .central ? .watch : .central }
        var flag: String { "--from \(rawValue)" }

        /// The side, watch or central, whose reading has more frames that pass every check (then
        /// fewer that fail one); the watch's when both read alike.
        static func parsedBest(by decode: (StreamSide) -> [DecodedFrame]) -> (StreamSide, [DecodedFrame]) {
            func score(_ frames: [DecodedFrame]) -> (Int, Int) { (frames.filter { $0.verdict == .frame }.count, -frames.filter { $0.verdict != .frame }.count) }
            let watch = decode(.watch), central = decode(.central)
            return score(central) > score(watch) ? (.central, central) : (.watch, watch)
        }
    }
}

extension ProtocolCommand.Decode {
    /// --time-zone, else this machine's zone.
    func clockZone() throws -> TimeZone {
        guard let timeZone else { return .current }
        guard let zone = TimeZone(identifier: timeZone) else {
            throw CLIFailure("--time-zone \"\(timeZone)\" is not a time zone; use an IANA name such as Europe/Berlin", status: .usage)
        }
        return zone
    }

    /// The channel pasted bytes went over: a pair, or one of the characteristics the dialect's profile names.
    func pastedChannel(_ dialect: WatchDialect) throws -> CaptureChannel {
        guard let text = characteristic?.lowercased() else { return secondPair ? .second : .main }
        let named = dialect.gatt?.characteristics ?? []
        let matches = named.filter { $0.uuid == text || $0.uuid.hasPrefix("0000" + text + "-") || $0.uuid.hasPrefix("0000" + text) }
        guard matches.count == 1, let match = matches.first else {
            let known = named.map { String($0.uuid.prefix(8).dropFirst(4)) }.joined(separator: ", ")
            throw CLIFailure(named.isEmpty
                ? "the \(dialect.name) dialect speaks over its pairs only; leave out --characteristic (or give --second-pair)"
                : "--characteristic \(text) is none of the \(dialect.name) dialect's characteristics (\(known)); give one of those or its whole UUID",
                status: .usage)
        }
        return CaptureChannel(match)
    }
}

extension ProtocolCommand.Decode {
    /// The watch exchange of a btsnoop capture in its dialect, one session per connection.
    private func decodeCapture(_ path: String) throws {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIFailure("cannot read \(path): \(error.localizedDescription)", status: .noInput)
        }
        let traffic: ATTTraffic
        do { traffic = try CapturedExchange.traffic(btsnoop: Array(data)) } catch {
            throw CLIFailure("\(path): \(error.description)\(error.isTruncation ? " (the file ends inside a record: was it copied before the capture was stopped?)" : "")",
                             status: .dataError)
        }
        let found = try CapturedDialect.find(in: traffic, asked: dialect, path: path)
        let decoder = found.decoder.reading(clockIn: try clockZone())
        let exchange = found.exchange
        guard let first = exchange.values.first else { throw CLIFailure("no value in \(path)", status: .dataError) }
        if !json {
            print("dialect \(found.dialect.name): \(found.reason)")
            let handles = "write handle(s) \(exchange.writeHandles.sorted().map(Self.hex4)), notify handle(s) \(exchange.notifyHandles.sorted().map(Self.hex4))"
            print("watch service on \(exchange.connections.map(\.description).joined(separator: ", ")): \(handles), from the capture's \(exchange.handleSource == .discovery ? "GATT discovery" : "valid frames")")
        }
        struct Stream: Hashable { var connection: ConnectionKey; var channel: CaptureChannel; var flow: CaptureFlow }
        var sessions: [ConnectionKey: any CaptureSessionDecoder] = [:]
        var streams: [Stream] = []
        var printer = DecodePrinter(json: json, dialect: found.dialect.name)
        for value in exchange.values {
            let stream = Stream(connection: value.connection, channel: value.channel, flow: value.flow)
            if !streams.contains(stream) { streams.append(stream) }
            var session = sessions[value.connection] ?? decoder.session(started: Date(timeIntervalSince1970: Double(value.unixMicroseconds) / 1_000_000),
                                                                              peripheralName: exchange.peripheralNames[value.connection] ?? name)
            let context = DecodePrinter.Context(direction: value.direction.rawValue, connection: value.connection.description, channel: value.channel,
                                                time: CapturedExchange.seconds(from: first.unixMicroseconds, to: value.unixMicroseconds))
            for frame in session.append(value.bytes, channel: value.channel, flow: value.flow) { try printer.print(frame, context: context) }
            sessions[value.connection] = session
        }
        for stream in streams {
            guard var session = sessions[stream.connection] else { continue }
            let context = DecodePrinter.Context(direction: stream.flow.rawValue, connection: stream.connection.description, channel: stream.channel, time: 0)
            for frame in session.finish(channel: stream.channel, flow: stream.flow) { try printer.print(frame, context: context) }
            sessions[stream.connection] = session
        }
        if let toCapture {
            var entries = exchange.captureEntries
            for index in entries.indices where entries[index].direction == .open {
                if entries[index].name == nil { entries[index].name = name }
                entries[index].dialect = found.dialect.name.rawValue
            }
            do { try PrivateFile.write(try CaptureFile.lines(entries), to: toCapture) } catch { throw CLIFailure.from(error) }
        }
        if printer.frames == 0 {
            throw CLIFailure("no \(found.dialect.name) frame found in the watch values of \(path)", status: .dataError)
        }
    }

    private static func hex4(_ value: UInt16) -> String { "0x" + String(value, radix: 16, uppercase: false).leftPadded(to: 4) }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

private extension BTSnoopError {
    var isTruncation: Bool {
        switch self {
        case .truncatedRecordHeader, .recordPastEnd: true
        default: false
        }
    }
}

extension ProtocolCommand {
    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encode a message given as JSON into a frame, and show its fragments.",
            discussion: """
                The JSON is {"kind": …, "body": …} as in protocol-spec/v1/vectors/README.md.

                Example:
                  tsgateway protocol encode --sequence 3 --mtu 23 \\
                    '{"kind": "battery.response", "body": {"level": 87, "state": "charging"}}'
                """
        )

        @Argument(help: "The message as JSON.")
        var message: String

        @Option(help: "Sequence number 0…255.")
        var sequence: UInt8 = 0

        @Option(help: "Also cut the frame into the chunks sent at this ATT MTU (23…517).")
        var mtu: Int?

        func run() throws {
            let decoded: Message
            do {
                decoded = try JSONDecoder().decode(Message.self, from: Data(message.utf8))
            } catch {
                throw CLIFailure("the message JSON is not a valid {\"kind\", \"body\"} object: \(JSONErrorText.describe(error))", status: .dataError)
            }
            do {
                let bytes = try decoded.frame(sequence: sequence).encoded()
                print(HexInput.format(bytes))
                if let mtu {
                    for (index, chunk) in Fragmenter.chunks(of: bytes, mtu: try ATTMTU(mtu)).enumerated() {
                        print("chunk \(index): \(HexInput.format(chunk))")
                    }
                }
            } catch {
                throw CLIFailure("cannot encode \(decoded.kind): \(error.message)", status: .dataError)
            }
        }
    }
}

/// Hex text in, bytes out, with errors that point at the offending character.
enum HexInput {
    static func parse(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var pending: UInt8?
        for (position, character) in text.enumerated() {
            if character.isWhitespace || character == ":" || character == "," { continue }
            guard let digit = character.hexDigitValue else {
                throw CLIFailure("input character \(position + 1) ('\(character)') is not a hex digit", status: .dataError)
            }
            if let high = pending {
                bytes.append(high << 4 | UInt8(digit))
                pending = nil
            } else {
                pending = UInt8(digit)
            }
        }
        if pending != nil { throw CLIFailure("the hex input has an odd number of digits; the last byte is incomplete", status: .dataError) }
        if bytes.isEmpty { throw CLIFailure("no hex bytes given (pass them as arguments or on standard input)", status: .usage) }
        return bytes
    }

    static func format(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}
