import SwiftProtobuf

/// A frame's payload read as the message its command carries in its direction.
public struct NpkMessage: Sendable {
    public var command: NpkCommand
    public var info: NpkCommandInfo
    public var sequence: UInt16
    /// Where a list frame's element sits in its list; nil for other frames.
    public var position: NpkListPosition?
    /// Nil for a command whose payload is empty in this direction.
    public var message: (any SwiftProtobuf.Message)?

    /// Reads `frame` as sent in `direction`: unknown commands, list flags that do not fit the
    /// command, and payloads that are not the command's message are errors.
    public init(_ frame: NpkFrame, from direction: NpkDirection) throws {
        guard let info = frame.command.info else {
            throw NpkError(.unknownCommand, "cmd 0x\(hex2(frame.command.cmd)) key 0x\(hex2(frame.command.key)) is not a command this gateway speaks")
        }
        var payload = frame.payload
        var position: NpkListPosition?
        if frame.flags.contains(.list) {
            guard info.isList else {
                throw NpkError(.unexpectedListFrame, "\(frame.command) is not sent in list mode, but flag bit 5 is set")
            }
            (position, payload) = try NpkListPosition.split(payload)
        } else if info.isList {
            throw NpkError(.notAListFrame, "\(frame.command) comes in list mode, but flag bit 5 is not set")
        }
        self.command = frame.command
        self.info = info
        self.sequence = frame.sequence
        self.position = position
        self.message = try Self.parse(payload, as: info.messageType(direction), command: frame.command, direction: direction)
    }

    static func parse(_ payload: [UInt8], as type: (any SwiftProtobuf.Message.Type)?, command: NpkCommand,
                      direction: NpkDirection) throws -> (any SwiftProtobuf.Message)? {
        guard let type else {
            guard payload.isEmpty else {
                throw NpkError(.unexpectedPayload, "\(command) from the \(direction == .toWatch ? "gateway" : "watch") has no payload, but \(payload.count) bytes came")
            }
            return nil
        }
        do {
            return try type.init(serializedBytes: payload, extensions: nil, partial: false, options: BinaryDecodingOptions())
        } catch {
            throw NpkError(.payloadDoesNotParse, "\(command): the payload is not a \(type.protoMessageName) (\(error))")
        }
    }

    /// The message as `M`; an error when the command carries another one.
    public func payload<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M {
        guard let message = message as? M else {
            throw NpkError(.payloadDoesNotParse, "\(command) carries \(message.map { Swift.type(of: $0).protoMessageName } ?? "no payload"), not \(M.protoMessageName)")
        }
        return message
    }
}

extension NpkFrame {
    /// A frame carrying `message` (nil: an empty payload).
    public init(command: NpkCommand, flags: NpkFrameFlags = [], sequence: UInt16, message: (any SwiftProtobuf.Message)?) throws {
        self.init(command: command, flags: flags, sequence: sequence, payload: try message?.serializedBytes() ?? [])
    }

    /// The payload read as `M`, for a frame whose command the caller already knows.
    public func payload<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M {
        do {
            return try M(serializedBytes: payload)
        } catch {
            throw NpkError(.payloadDoesNotParse, "\(command): the payload is not a \(M.protoMessageName) (\(error))")
        }
    }
}
