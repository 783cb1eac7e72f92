import TSNpk
import TSSimulatedHistory

extension SimulatedWearer {
    /// The NPK watch's answer to a bind this wearer was asked to confirm (`TSMetaAuthRespond.result`).
    public var bindAnswer: NpkBindResult {
        switch self {
        case .confirm: .ok
        case .decline: .declinedOnWatch
        case .ignore: .notAnsweredOnWatch
        }
    }
}
