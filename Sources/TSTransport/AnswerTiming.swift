import TSModels

/// When a simulated device's answers to a write go out, relative to the write's acknowledgement
/// (the ATT Write Response a central's WriteValue returns with). A central must take each answer
/// whichever comes first and however long after its write it comes (issue 47: a band nobody
/// here wrote answered before the response, and the central missed it). `tsgateway
/// simulate --answer-timing` takes these words for every family.
public enum AnswerTiming: Sendable, Hashable, CustomStringConvertible {
    /// From inside the write handler, at once. In-process the write returns once handled, so its
    /// answer comes first; over BlueZ every written characteristic also takes write commands, and
    /// bluetoothd acknowledges a write request to such a characteristic as it hands the write
    /// over, so the acknowledgement comes first.
    case immediate
    /// From inside the write handler, and over BlueZ the characteristics that answer take write
    /// requests only (unless the family's central only ever writes commands), so bluetoothd
    /// acknowledges a write once the handler has returned: the answer reaches the central before
    /// its write's response.
    case beforeResponse
    /// This much after the device made it (the write long acknowledged), in the order made.
    case late(Duration)

    /// `immediate`, `before-response`, `late` (2.5 s) or `late:MS`.
    public init(text: String) throws(AnswerTimingError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("immediate", 1): self = .immediate
        case ("before-response", 1): self = .beforeResponse
        case ("late", 1): self = .late(Self.defaultLateness)
        case ("late", 2):
            guard let milliseconds = Int(parts[1]), (0...60_000).contains(milliseconds) else {
                throw AnswerTimingError("--answer-timing late:MS takes 0 … 60000 milliseconds; got \"\(parts[1])\"")
            }
            self = .late(.milliseconds(milliseconds))
        default:
            throw AnswerTimingError("--answer-timing \"\(text)\" is none of \(Self.choices)")
        }
    }

    public static let choices = "immediate, before-response, late, late:MS"
    /// Later than one request timeout of a central (2 s by default) after the write's response.
    public static let defaultLateness: Duration = .milliseconds(2500)

    public var description: String {
        switch self {
        case .immediate: "immediate"
        case .beforeResponse: "before-response"
        case let .late(delay): "late:\(Int((delay / .milliseconds(1)).rounded()))"
        }
    }

    /// Whether the characteristics that answer take write commands too (then bluetoothd
    /// acknowledges a write request before the device has handled it).
    public var answeringCharacteristicsTakeCommands: Bool { self != .beforeResponse }

    /// The GATT flags of a characteristic a central writes and the device answers, for a central
    /// that writes as `mode` says: a central that only ever writes commands keeps them allowed.
    public func answeringWriteFlags(centralWrites mode: GATTProfile.WriteMode) -> [String] {
        answeringCharacteristicsTakeCommands || mode == .withoutResponse ? ["write", "write-without-response"] : ["write"]
    }
}

/// An `--answer-timing` that is none of `AnswerTiming`'s words, and what to type instead.
public struct AnswerTimingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
