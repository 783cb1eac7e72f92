import TSModels
import TSProtocol

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

/// Timeouts and policies of the central side (wire-protocol.md §4).
public struct WatchConfiguration: Sendable {
    public var requestTimeout: Duration = .milliseconds(2000)
    /// Retransmissions of a request after the first attempt.
    public var requestRetries = 3
    /// Sleep pages in flight asked for in SLEEP_QUERY.
    public var window: UInt8 = 8
    /// With no page for this long, ask for a retransmission.
    public var pageIdleTimeout: Duration = .milliseconds(2000)
    public var pageIdleRetries = 5
    public var syncTimeOnConnect = true
    /// The protocol v1.1 features asked for in EXTENSIONS when the watch offers it; empty: behave
    /// as a version-1 central (send no EXTENSIONS).
    public var extensions: ExtensionFeatures = .version1_1
    public var timeZone: TimeZone = .current
    /// The wall clock used for TIME_SET (tests fix it so captures replay byte for byte).
    public var now: @Sendable () -> Date = { Date() }
    /// This connect pairs: it asks the watch to accept the gateway (NPK: a bind, 03/01), which
    /// the wearer may have to confirm on the watch. Otherwise a central logs in as paired before.
    public var pairing = false
    /// The secret the watch takes for pairing, for a dialect that takes one
    /// (`WatchDialect.credential`: NPK's auth code, Huami's auth key).
    public var pairingSecret: PairingSecret?
    /// Told, with what the wearer should do, when the watch may be waiting for the wearer to
    /// confirm a pairing.
    public var confirmationNeeded: (@Sendable (String) -> Void)?

    public init() {}
}

import Foundation
