/// What the wearer of a simulated watch does when the watch asks them to confirm a pairing
/// (a bind; `TSGATEWAY_SIMULATOR_WEARER`, `simulated: true` in serve's configuration).
public enum SimulatedWearer: String, Sendable, CaseIterable {
    case confirm, decline, ignore

    public static let choices = allCases.map(\.rawValue).joined(separator: ", ")
}
