/// The head of a list frame's payload: how many elements the list has and which one this is
/// (both u32 big-endian, the index from 0). The element's message follows.
public struct NpkListPosition: Sendable, Hashable {
    public static let size = 8

    public var total: UInt32
    public var index: UInt32

    public init(total: UInt32, index: UInt32) {
        self.total = total
        self.index = index
    }

    public var bytes: [UInt8] { Self.bigEndian(total) + Self.bigEndian(index) }

    /// A list frame's payload: the position, then the element.
    public static func payload(total: UInt32, index: UInt32, element: [UInt8]) -> [UInt8] {
        NpkListPosition(total: total, index: index).bytes + element
    }

    /// Splits a list frame's payload into its position and element.
    public static func split(_ payload: [UInt8]) throws -> (NpkListPosition, [UInt8]) {
        guard payload.count >= size else {
            throw NpkError(.truncatedListHeader, "a list frame's payload starts with 8 bytes (total, index), only \(payload.count) came")
        }
        func u32(_ at: Int) -> UInt32 { payload[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let position = NpkListPosition(total: u32(0), index: u32(4))
        guard position.index < position.total else {
            throw NpkError(.listIndexOutOfRange, "list element \(position.index) of a list of \(position.total): the index must be below the total")
        }
        return (position, Array(payload[size...]))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Collects the frames of one list (one sequence, one command, one total) in order. The watch
/// does not resend a single element, so a gap is an error: the caller asks for the data again.
public struct NpkListAssembler: Sendable {
    public private(set) var command: NpkCommand?
    public private(set) var sequence: UInt16?
    public private(set) var total: UInt32?
    /// The elements' payloads (the message after the position), in index order.
    public private(set) var elements: [[UInt8]] = []

    public init() {}

    public var isComplete: Bool { total.map { elements.count == Int($0) } ?? false }

    /// Adds the next frame of the list and returns its element.
    @discardableResult
    public mutating func add(_ frame: NpkFrame) throws -> (position: NpkListPosition, element: [UInt8]) {
        guard frame.flags.contains(.list) else {
            throw NpkError(.notAListFrame, "\(frame.command) seq \(frame.sequence) inside a list has no list flag (bit 5)")
        }
        let (position, element) = try NpkListPosition.split(frame.payload)
        if let command, let sequence, let total {
            guard frame.command == command else {
                throw NpkError(.listCommandChanged, "\(frame.command) arrived inside a list of \(command)")
            }
            guard frame.sequence == sequence else {
                throw NpkError(.listSequenceChanged, "sequence \(frame.sequence) arrived inside a list of sequence \(sequence)")
            }
            guard position.total == total else {
                throw NpkError(.listTotalChanged, "an element says the list has \(position.total) elements, the first said \(total)")
            }
        } else {
            command = frame.command
            sequence = frame.sequence
            total = position.total
        }
        guard position.index == UInt32(elements.count) else {
            throw NpkError(.listIndexOutOfOrder, "list element \(position.index) arrived where \(elements.count) was next: an element was lost or repeated; ask for the data again")
        }
        elements.append(element)
        return (position, element)
    }

    /// The elements of a complete list.
    public func finish() throws -> [[UInt8]] {
        guard isComplete else {
            throw NpkError(.listIncomplete, "the list ended after \(elements.count) of \(total.map(String.init) ?? "its") elements")
        }
        return elements
    }
}
