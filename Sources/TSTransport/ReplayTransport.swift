import TSProtocol

/// Plays a capture back to a central: each `open()` replays the next recorded connection. Every
/// write must equal the recorded one (the same central logic with the same inputs writes the
/// same bytes); after it, the notifications recorded up to the next write are delivered.
public actor ReplayTransport: WatchTransport {
    private var connections: [[CaptureEntry]]

    public init(capture: [CaptureEntry]) {
        var segments: [[CaptureEntry]] = []
        for entry in capture {
            if entry.direction == .open { segments.append([entry]) } else if !segments.isEmpty { segments[segments.count - 1].append(entry) }
        }
        connections = segments
    }

    public func open() async throws -> any TransportConnection {
        guard !connections.isEmpty else { throw TransportError.captureExhausted("no recorded connection left to open") }
        let segment = connections.removeFirst()
        let mtu = try ATTMTU(segment[0].mtu ?? ATTMTU.minimum)
        let connection = ReplayConnection(mtu: mtu, entries: Array(segment.dropFirst()))
        await connection.deliverUntilNextWrite()
        return connection
    }
}

actor ReplayConnection: TransportConnection {
    nonisolated let mtu: ATTMTU
    nonisolated let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private var entries: ArraySlice<CaptureEntry>
    private var isOpen = true

    init(mtu: ATTMTU, entries: [CaptureEntry]) {
        self.mtu = mtu
        self.entries = entries[...]
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
    }

    func write(_ chunk: [UInt8]) async throws {
        guard isOpen else { throw TransportError.notConnected }
        guard let next = entries.first, next.direction == .write else {
            throw TransportError.captureExhausted("the central wrote \(chunk.count) bytes where the capture has \(entries.first?.direction.rawValue ?? "its end")")
        }
        guard next.bytes == chunk else {
            throw TransportError.captureExhausted("the central wrote other bytes than recorded (recorded \(next.hex))")
        }
        entries.removeFirst()
        deliverUntilNextWrite()
    }

    func deliverUntilNextWrite() {
        while let entry = entries.first, entry.direction != .write {
            entries.removeFirst()
            switch entry.direction {
            case .notification: continuation.yield(.notification(entry.bytes))
            case .disconnected:
                isOpen = false
                continuation.yield(.disconnected(reason: "recorded disconnect"))
                continuation.finish()
                return
            case .open, .write: break
            }
        }
    }

    func close() async {
        guard isOpen else { return }
        isOpen = false
        continuation.yield(.disconnected(reason: "closed by the central"))
        continuation.finish()
    }
}
