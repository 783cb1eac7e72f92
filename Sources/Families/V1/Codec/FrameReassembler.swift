import TSGATT
/// Turns received chunks, cut any way, back into frames (wire-protocol.md §3): scans for the
/// start marker, checks version, length and CRC, recovers a frame that began inside a rejected
/// one, and abandons a partial frame after a quiet period. Pure: the caller passes the time.
public struct FrameReassembler: Sendable {
    public enum Event: Sendable, Hashable {
        case frame(Frame)
        /// A complete candidate frame whose CRC failed; its header is there to NACK it.
        case corrupt(CorruptFrame)
        /// Bytes dropped outside any frame (noise, stray markers, remains of abandoned frames).
        case garbage(byteCount: Int)
    }

    public struct CorruptFrame: Sendable, Hashable {
        public var header: FrameHeader
        public var error: ProtocolError
    }

    public let maxPayload: Int
    public let partialFrameTimeout: Duration

    private var buffer: [UInt8] = []
    private var start = 0
    private var lastInput: Duration?
    private var garbage = 0

    public init(maxPayload: Int = Frame.maxPayload, partialFrameTimeout: Duration = .milliseconds(1000)) {
        self.maxPayload = min(max(maxPayload, 0), Frame.maxPayload)
        self.partialFrameTimeout = partialFrameTimeout
    }

    /// Bytes held that do not yet form a frame.
    public var pendingByteCount: Int { buffer.count - start }

    /// When a pending partial frame will be abandoned if nothing more arrives; nil when none is pending.
    public var partialFrameDeadline: Duration? {
        guard pendingByteCount > 0, let lastInput else { return nil }
        return lastInput + partialFrameTimeout
    }

    /// Adds one received chunk; `now` is any monotonic clock reading (the same clock on every call).
    public mutating func append(_ chunk: some Collection<UInt8>, at now: Duration) -> [Event] {
        var events = expire(at: now)
        lastInput = now
        buffer.append(contentsOf: chunk)
        scan(abandoningPartial: false, into: &events)
        compact()
        return events
    }

    /// Abandons a partial frame that has waited `partialFrameTimeout` since the last byte.
    public mutating func expire(at now: Duration) -> [Event] {
        guard let deadline = partialFrameDeadline, now >= deadline else { return [] }
        return flush()
    }

    /// Abandons any partial frame now, delivering complete frames found inside it.
    public mutating func flush() -> [Event] {
        var events: [Event] = []
        scan(abandoningPartial: true, into: &events)
        compact()
        return events
    }

    private mutating func scan(abandoningPartial: Bool, into events: inout [Event]) {
        while start < buffer.count {
            guard let marker = buffer[start...].firstIndex(of: Frame.startMarker) else {
                garbage += buffer.count - start
                start = buffer.count
                break
            }
            garbage += marker - start
            start = marker
            let header: FrameHeader
            do {
                header = try FrameHeader.parse(buffer, at: start, maxPayload: maxPayload)
            } catch where error.code == .truncatedFrame {
                if abandoningPartial { skipMarker(); continue }
                break
            } catch {
                skipMarker()
                continue
            }
            let total = Frame.overhead + header.payloadLength
            if buffer.count - start < total {
                if abandoningPartial { skipMarker(); continue }
                break
            }
            do {
                let frame = try header.frame(in: buffer, at: start)
                reportGarbage(into: &events)
                events.append(.frame(frame))
                start += total
            } catch {
                reportGarbage(into: &events)
                events.append(.corrupt(CorruptFrame(header: header, error: error)))
                start += 1
            }
        }
        reportGarbage(into: &events)
    }

    private mutating func skipMarker() {
        garbage += 1
        start += 1
    }

    private mutating func reportGarbage(into events: inout [Event]) {
        if garbage > 0 {
            events.append(.garbage(byteCount: garbage))
            garbage = 0
        }
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }
}
