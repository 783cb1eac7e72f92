import Foundation
import TSHuami

/// When the simulated band's answers to a write go out, relative to the write's acknowledgement
/// (the ATT Write Response the central's WriteValue returns with). A central must take each
/// answer whichever comes first and however long after its write it comes.
public enum HuamiAnswerTiming: Sendable, Hashable, CustomStringConvertible {
    /// From inside the write handler, at once (the band's behaviour before this switch). In-process
    /// the write returns once handled, so its answer comes first; over BlueZ every written
    /// characteristic also takes write commands, and bluetoothd acknowledges a write request to
    /// such a characteristic as it hands the write over, so the acknowledgement comes first.
    case immediate
    /// From inside the write handler, and over BlueZ the characteristics that answer (auth,
    /// configuration, fetch control) take write requests only, so bluetoothd acknowledges a write
    /// when the handler has returned: the answer reaches the central before its write's response.
    /// A fetch's data stream is no answer: it goes out once the handler has returned.
    case beforeResponse
    /// After the handler has returned (the write acknowledged), this much later; one write's
    /// answers go out in order, and never before an earlier write's.
    case late(Duration)

    /// `immediate`, `before-response`, `late` (2.5 s) or `late:MS`.
    public init(text: String) throws(HuamiError) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("immediate", 1): self = .immediate
        case ("before-response", 1): self = .beforeResponse
        case ("late", 1): self = .late(Self.defaultLateness)
        case ("late", 2):
            guard let milliseconds = Int(parts[1]), (0...60_000).contains(milliseconds) else {
                throw HuamiError(.invalidValue, "--answer-timing late:MS takes 0 … 60000 milliseconds; got \"\(parts[1])\"")
            }
            self = .late(.milliseconds(milliseconds))
        default:
            throw HuamiError(.invalidValue, "--answer-timing \"\(text)\" is none of \(Self.choices)")
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
    /// acknowledges a write request before the band has handled it).
    public var answeringCharacteristicsTakeCommands: Bool { self != .beforeResponse }
}

/// Answers held while a write is handled, for `HuamiAnswerTiming.late`.
enum HeldAnswer: Sendable {
    case notification(SimulatedHuamiBand.Characteristic, [UInt8])
    /// A link loss a fault caused while the write was handled: it comes after the answers before it.
    case linkLoss
}

extension SimulatedHuamiBand {
    /// Runs the handler of one write; with `late` timing its answers are held and go out once it
    /// has returned, after the delay and after every earlier write's answers.
    func answering(_ handle: () async -> Void) async {
        guard case let .late(delay) = configuration.answerTiming else {
            await handle()
            return
        }
        holding.append([])
        await handle()
        let held = holding.removeLast()
        guard !held.isEmpty else { return }
        let earlier = lateAnswers
        lateAnswers = Task { [weak self] in
            await earlier?.value
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            for answer in held {
                guard let self else { return }
                switch answer {
                case let .notification(characteristic, bytes): await self.deliver(characteristic, bytes)
                case .linkLoss: await self.deliverLinkLoss()
                }
            }
        }
    }
}
