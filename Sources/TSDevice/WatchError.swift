import TSGATT
import TSModels

/// Why a watch operation failed, in words a person can act on.
public enum WatchError: CategorizedError, Sendable, CustomStringConvertible {
    case notConnected
    /// Opening the link failed; the category is the failure's own (no adapter, unknown device, …).
    case connectFailed(String, ErrorCategory)
    case disconnected(String)
    case timeout(command: String, attempts: Int)
    /// The watch answered with an ERROR.
    case rejected(command: String, status: StatusCode, message: String)
    /// The watch gave up a sleep transfer (no progress for too long); querying again resumes it.
    case transferAbandoned(String)
    /// The watch sent something protocol v1 does not allow.
    case protocolViolation(String)
    case invalidAlarms([AlarmProblem])
    case invalidMonitorConfig(MonitorType, MonitorConfigProblem)
    case unsupported(String)

    public var description: String {
        switch self {
        case .notConnected: "the watch is not connected"
        case let .connectFailed(reason, _): "could not connect to the watch: \(reason)"
        case let .disconnected(reason): "the watch disconnected: \(reason)"
        case let .timeout(command, attempts): "the watch did not answer \(command) (\(attempts) attempts); is it in range and awake?"
        case let .rejected(command, status, message):
            "the watch refused \(command): \(status.name)" + (message.isEmpty ? "" : " — \(message)")
        case let .transferAbandoned(detail): "the watch gave up the sleep transfer: \(detail)"
        case let .protocolViolation(detail): "the watch broke the protocol: \(detail)"
        case let .invalidAlarms(problems):
            problems.map(\.description).joined(separator: "; ")
        case let .invalidMonitorConfig(type, problem): "\(type.name) monitor: \(problem)"
        case let .unsupported(what): "this watch does not support \(what)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case let .connectFailed(_, category): category == .failed ? .unavailable : category
        case .notConnected, .disconnected: .unavailable
        case .timeout, .transferAbandoned: .timeout
        case .rejected, .protocolViolation: .protocolError
        case .invalidAlarms, .invalidMonitorConfig: .invalidInput
        case .unsupported: .notSupported
        }
    }
}

/// The watch does not report a monitor setting back (a band whose heart-rate settings can only
/// be written): the watch service answers with the one it last wrote, kept in the store.
public struct MonitorSettingNotReported: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var type: MonitorType

    public init(type: MonitorType) { self.type = type }

    public var description: String { "the watch does not report its \(type.name) monitor setting; `monitor set` writes one" }
    public var category: ErrorCategory { .notSupported }
}
