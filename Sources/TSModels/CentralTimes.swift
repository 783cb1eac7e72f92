/// The times a central writes of its own into a request: its clock (a time set, a login) and the
/// range a sync asks for. A replay lets them differ from the recorded ones by as much as the
/// recording lasted, as a running clock makes them differ (`ReplayTransport`), and answers with
/// what was recorded.
public struct CentralTimes: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The central's clock when it wrote the request (or the end of a range up to now).
        case clock
        /// The same as the watch's local wall time: seconds since 1970 in the zone the central set it in.
        case wallClock
        /// A range's start, which comes from the sync's `--from`, not from the clock.
        case rangeStart
    }

    public struct Field: Sendable, Hashable {
        public var kind: Kind
        /// Unix seconds.
        public var time: Int64

        public init(_ kind: Kind, _ time: Int64) {
            self.kind = kind
            self.time = time
        }
    }

    /// The request as it reads with those fields left out: what must still be the recorded one.
    public var rest: [UInt8]
    public var fields: [Field]

    public init(rest: [UInt8], fields: [Field]) {
        self.rest = rest
        self.fields = fields
    }
}

/// A dialect's reading of the times its central writes (`WatchDialect.centralTimes`).
public protocol CentralTimeReader: Sendable {
    /// The times in one write of the central on `channel`, and the rest of it; nil: the write
    /// carries none (or does not read as a request that does), so it must equal the recorded one.
    func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes?
}
