/// The result of a bind or login (`TSMetaAuthRespond.result`).
public struct NpkBindResult: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = NpkBindResult(rawValue: 0)
    public static let userIdMismatch = NpkBindResult(rawValue: 1)
    public static let declinedOnWatch = NpkBindResult(rawValue: 2)
    public static let notAnsweredOnWatch = NpkBindResult(rawValue: 3)
    public static let okWithoutClassicBluetooth = NpkBindResult(rawValue: 4)
    public static let batteryTooLow = NpkBindResult(rawValue: 5)
    public static let factoryResetRunning = NpkBindResult(rawValue: 6)
    public static let factoryResetNeeded = NpkBindResult(rawValue: 7)
    public static let unknownFailure = NpkBindResult(rawValue: 127)

    /// 0 and 4, as the SDK counts them.
    public var isSuccess: Bool { self == .ok || self == .okWithoutClassicBluetooth }

    public var description: String {
        switch self {
        case .ok: "bound"
        case .userIdMismatch: "the watch is bound to another user id: pair again (bind) instead of logging in"
        case .declinedOnWatch: "the bind was declined on the watch"
        case .notAnsweredOnWatch: "nobody confirmed the bind on the watch in time: try again and confirm it on the watch"
        case .okWithoutClassicBluetooth: "bound (classic Bluetooth not connected)"
        case .batteryTooLow: "the watch's battery is too low to bind: charge it and try again"
        case .factoryResetRunning: "the watch is resetting to factory settings: wait and try again"
        case .factoryResetNeeded: "the watch must be reset to factory settings before it binds to a new user"
        case .unknownFailure: "the watch refused the bind (unknown failure)"
        default: "the watch refused the bind with result \(rawValue)"
        }
    }
}
