import TSModels

/// What went wrong on the HCI side, with the category the CLI's exit status comes from.
public enum HCIError: Error, Sendable, Hashable, CategorizedError, CustomStringConvertible {
    /// The kernel refused for lack of privilege (CAP_NET_RAW for the monitor channel and for LE commands).
    case permission(String)
    /// No such controller, or it is down.
    case noAdapter(String)
    /// An adapter name that is not hciN.
    case invalidAdapterName(String)
    /// A socket call failed: the call and strerror's text.
    case system(call: String, errno: Int32, message: String)
    /// The controller answered an HCI command with a non-zero status.
    case commandFailed(command: String, status: UInt8)
    /// No such connection on the controller.
    case notConnected(String)

    public var category: ErrorCategory {
        switch self {
        case .permission: .permission
        case .noAdapter: .unavailable
        case .invalidAdapterName: .invalidInput
        case .system: .failed
        case .commandFailed: .failed
        case .notConnected: .unavailable
        }
    }

    public var description: String {
        switch self {
        case let .permission(message), let .noAdapter(message), let .notConnected(message): message
        case let .invalidAdapterName(name): "\"\(name)\" is not an adapter name; adapters are called hci0, hci1, …"
        case let .system(call, errno, message): "\(call) failed: \(message) (errno \(errno))"
        case let .commandFailed(command, status): "the controller refused \(command) (HCI status 0x\(String(status, radix: 16)))"
        }
    }

    /// The hint every privilege error carries.
    public static let privilegeHint = "run it as root (sudo) or give the binary the capability once: sudo setcap cap_net_raw+ep \"$(command -v tsgateway)\""
}

/// "hci3" → 3.
public func adapterIndex(_ name: String) throws(HCIError) -> UInt16 {
    guard name.hasPrefix("hci"), let index = UInt16(name.dropFirst(3)), index < 0xFFFF else { throw .invalidAdapterName(name) }
    return index
}
