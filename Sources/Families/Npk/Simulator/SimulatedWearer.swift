import TSNpk

/// What the wearer of a simulated NPK watch does when the watch asks to confirm a bind.
public enum SimulatedWearer: String, Sendable, CaseIterable {
    case confirm, decline, ignore

    /// The watch's answer to the bind (`TSMetaAuthRespond.result`).
    public var bindAnswer: NpkBindResult {
        switch self {
        case .confirm: .ok
        case .decline: .declinedOnWatch
        case .ignore: .notAnsweredOnWatch
        }
    }

    public static let choices = allCases.map(\.rawValue).joined(separator: ", ")
}
