import ArgumentParser
import Foundation
import TSFiles
import TSModels
import TSProtocol
import TSSnoop
import TSTransport

struct ProtocolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "protocol",
        abstract: "Decode and encode wire-protocol v1 frames (for captures and firmware work).",
        discussion: "The protocol is specified in protocol-spec/wire-protocol.md.",
        subcommands: [Decode.self, Encode.self]
    )
}

extension ProtocolCommand {
    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode a captured byte stream into frames and messages.",
            discussion: """
                Give the bytes as hex, in arguments or on standard input; spaces, colons and \
                line breaks are ignored, so btmon or Wireshark dumps can be pasted as they are. \
                The bytes go through the same reassembler as received notifications: garbage is \
                skipped, a corrupt frame is reported and scanning goes on.

                With --btsnoop, the watch-service exchange of an HCI capture (tsgateway capture, \
                btmon -w, Android's HCI snoop log) is decoded: ATT writes to the write \
                characteristic and notifications of the notify characteristic, with the handles \
                from the capture's GATT discovery or, without one, the handles that carry valid \
                frames; L2CAP fragments, EATT channels and frames are reassembled.

                Example:
                  tsgateway protocol decode a5 01 00 01 02 00 00 00 0e dc 91 b6
                  tsgateway protocol decode --btsnoop sync.btsnoop --json
                """
        )

        @Argument(help: "Hex bytes of the stream (default: read standard input).")
        var hex: [String] = []

        @Flag(help: "Print one JSON object per frame or problem (schema in docs/cli.md, \"protocol decode --json\").")
        var json = false

        @Option(help: ArgumentHelp("Decode the watch-service exchange of this btsnoop capture.", valueName: "FILE"))
        var btsnoop: String?

        @Option(help: ArgumentHelp("With --btsnoop: also write the exchange as a replayable capture (JSON lines, 0600).", valueName: "FILE"))
        var toCapture: String?

        func validate() throws {
            if btsnoop != nil, !hex.isEmpty { throw ValidationError("give either hex bytes or --btsnoop, not both") }
            if toCapture != nil, btsnoop == nil { throw ValidationError("--to-capture needs --btsnoop") }
        }

        func run() throws {
            if let btsnoop { return try decodeCapture(btsnoop) }
            let text = hex.isEmpty ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : hex.joined(separator: " ")
            let bytes = try HexInput.parse(text)
            var reassembler = FrameReassembler()
            let events = reassembler.append(bytes, at: .zero) + reassembler.flush()
            var printer = DecodePrinter(json: json)
            for event in events { try printer.print(event) }
            if printer.frames == 0 {
                throw CLIFailure("no frame found in \(bytes.count) byte(s); a frame starts with a5 01", status: .dataError)
            }
        }
    }
}

extension ProtocolCommand.Decode {
    /// The watch-service exchange of a btsnoop capture, one reassembler per connection and direction.
    private func decodeCapture(_ path: String) throws {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIFailure("cannot read \(path): \(error.localizedDescription)", status: .noInput)
        }
        let exchange: CapturedExchange
        do { exchange = try CapturedExchange(btsnoop: Array(data)) } catch {
            throw CLIFailure("\(path): \(error.description)", status: .dataError)
        }
        guard let first = exchange.values.first else {
            throw CLIFailure("\(path) holds no ATT write or notification that carries protocol-v1 frames on the watch service (\(exchange.traffic.operations.count) ATT PDU(s) in all); was the capture running during the sync?", status: .dataError)
        }
        if !json {
            let handles = "write handle(s) \(exchange.writeHandles.sorted().map(Self.hex4)), notify handle(s) \(exchange.notifyHandles.sorted().map(Self.hex4))"
            print("watch service on \(exchange.connections.map(\.description).joined(separator: ", ")): \(handles), from the capture's \(exchange.handleSource == .discovery ? "GATT discovery" : "valid frames")")
        }
        struct Stream: Hashable { var connection: ConnectionKey; var direction: CaptureEntry.Direction }
        var reassemblers: [Stream: FrameReassembler] = [:]
        var printer = DecodePrinter(json: json)
        for value in exchange.values {
            let stream = Stream(connection: value.connection, direction: value.direction)
            var reassembler = reassemblers[stream] ?? FrameReassembler()
            let context = DecodePrinter.Context(direction: value.direction.rawValue, connection: value.connection.description, time: CapturedExchange.seconds(from: first.unixMicroseconds, to: value.unixMicroseconds))
            for event in reassembler.append(value.bytes, at: .zero) { try printer.print(event, context: context) }
            reassemblers[stream] = reassembler
        }
        for (stream, var reassembler) in reassemblers.sorted(by: { ($0.key.connection, $0.key.direction.rawValue) < ($1.key.connection, $1.key.direction.rawValue) }) {
            let context = DecodePrinter.Context(direction: stream.direction.rawValue, connection: stream.connection.description, time: 0)
            for event in reassembler.flush() { try printer.print(event, context: context) }
        }
        if let toCapture {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var text = Data()
            for entry in exchange.captureEntries {
                text.append(try encoder.encode(entry))
                text.append(0x0A)
            }
            do { try PrivateFile.write(text, to: toCapture) } catch { throw CLIFailure.from(error) }
        }
        if printer.frames == 0 {
            throw CLIFailure("no frame found in the watch-service values of \(path)", status: .dataError)
        }
    }

    private static func hex4(_ value: UInt16) -> String { "0x" + String(value, radix: 16, uppercase: false).leftPadded(to: 4) }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

extension ProtocolCommand {
    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encode a message given as JSON into a frame, and show its fragments.",
            discussion: """
                The JSON is {"kind": …, "body": …} as in protocol-spec/vectors/README.md.

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
