/// Why bytes from the watch did not become a frame.
public enum NpkStreamDrop: Sendable, Hashable {
    /// A complete frame whose payload did not match its CRC (header fields as read).
    case crcMismatch(command: NpkCommand, sequence: UInt16, length: Int)
    /// A 0xAB whose length field is over 0x2000: not a frame start.
    case lengthOverBound(length: Int)
    /// A frame start whose bytes stopped coming (the link went quiet or away).
    case truncated(bytesReceived: Int)
}

/// How many bytes the reassembler dropped, by reason.
public struct NpkStreamDropCounts: Sendable, Hashable {
    public var crcMismatch = 0
    public var lengthOverBound = 0
    public var truncated = 0

    public init(crcMismatch: Int = 0, lengthOverBound: Int = 0, truncated: Int = 0) {
        self.crcMismatch = crcMismatch
        self.lengthOverBound = lengthOverBound
        self.truncated = truncated
    }

    mutating func count(_ drop: NpkStreamDrop) {
        switch drop {
        case .crcMismatch: crcMismatch += 1
        case .lengthOverBound: lengthOverBound += 1
        case .truncated: truncated += 1
        }
    }
}

/// Turns chunks from the notify characteristic back into frames (topstep-npk.md section 4):
/// skip to 0xAB, wait for 10 bytes, refuse a length over 0x2000 (that 0xAB was no frame start),
/// wait for 10 + length bytes, check the CRC. A mismatch drops only the 0xAB and scanning goes
/// on behind it, so a frame that began inside the damaged bytes is still found. No I/O, no timers:
/// the owner calls `flush()` when the link goes quiet or away.
public struct NpkReassembler: Sendable {
    public enum Output: Sendable, Hashable {
        case frame(NpkFrame)
        case dropped(NpkStreamDrop)
    }

    private var buffer: [UInt8] = []
    private var start = 0
    public private(set) var drops = NpkStreamDropCounts()

    public init() {}

    /// Bytes waiting for the rest of a frame.
    public var pendingByteCount: Int { buffer.count - start }

    public mutating func feed(_ chunk: some Sequence<UInt8>) -> [Output] {
        buffer.append(contentsOf: chunk)
        var out: [Output] = []
        scan(into: &out)
        return out
    }

    /// Abandons every pending partial frame, each counted as truncated, and scans the bytes
    /// behind it again; afterwards the buffer is empty.
    public mutating func flush() -> [Output] {
        var out: [Output] = []
        while start < buffer.count {
            drop(.truncated(bytesReceived: buffer.count - start), into: &out)
            start += 1
            scan(into: &out)
        }
        compact()
        return out
    }

    private mutating func scan(into out: inout [Output]) {
        defer { compact() }
        while true {
            guard let magic = buffer[start...].firstIndex(of: NpkFrame.magic) else {
                start = buffer.count
                return
            }
            start = magic
            guard buffer.count - start >= NpkFrame.headerSize else { return }
            let length = Int(buffer[start + 4]) << 8 | Int(buffer[start + 5])
            guard length <= NpkFrame.maxPayloadLength else {
                drop(.lengthOverBound(length: length), into: &out)
                start += 1
                continue
            }
            let end = start + NpkFrame.headerSize + length
            guard buffer.count >= end else { return }
            do {
                out.append(.frame(try NpkFrame(decoding: buffer[start..<end])))
                start = end
            } catch {
                drop(.crcMismatch(command: NpkCommand(cmd: buffer[start + 1], key: buffer[start + 2]),
                                  sequence: UInt16(buffer[start + 8]) << 8 | UInt16(buffer[start + 9]), length: length), into: &out)
                start += 1
            }
        }
    }

    private mutating func drop(_ drop: NpkStreamDrop, into out: inout [Output]) {
        drops.count(drop)
        out.append(.dropped(drop))
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}
