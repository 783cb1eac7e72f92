import TSModels

/// Exit statuses of `tsgateway`, documented in README ("Exit codes"). Values follow sysexits(3)
/// where one fits, so scripts can tell a usage error from a missing adapter from a timeout.
enum ExitStatus: Int32, Sendable {
    case success = 0
    case failure = 1
    /// Bad command line (argument-parser's own validation errors use this too).
    case usage = 64
    /// An input file was read but its contents are wrong (bad JSON/CSV row, bad hex).
    case dataError = 65
    /// An input file is missing or unreadable.
    case noInput = 66
    /// No Bluetooth adapter, no bluetoothd on the bus, adapter powered off.
    case unavailable = 69
    case software = 70
    case ioError = 74
    /// The watch or BlueZ did not answer in time.
    case timeout = 75
    /// The watch sent something the protocol does not allow.
    case protocolError = 76
    /// D-Bus policy or file permissions refused the operation.
    case permission = 77
    /// A configuration file is invalid.
    case config = 78
    /// The watch lacks the feature asked for.
    case notSupported = 79
    /// No known watch matches the address or name given.
    case deviceNotFound = 80
    /// The watch must be paired first (`tsgateway pair ADDRESS`).
    case notPaired = 81
}

extension ExitStatus {
    /// The status of an error category (the table lives with the categories, in TSModels).
    init(_ category: ErrorCategory) {
        self = ExitStatus(rawValue: category.exitStatus) ?? .failure
    }
}

/// An error the CLI reports as one line on stderr, with a specific exit status.
struct CLIFailure: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus

    init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    var description: String { message }
}

extension CLIFailure {
    /// The exit status and message for an error from the lower layers or the daemon: the
    /// status is the error's category's (README "Exit codes").
    static func from(_ error: any Error) -> CLIFailure {
        switch error {
        case let failure as CLIFailure: return failure
        // Alarm text comes from this command's own arguments.
        case let mistake as AlarmTextError: return CLIFailure(mistake.message, status: .usage)
        case is CancellationError: return CLIFailure("interrupted", status: .failure)
        case let categorized as any CategorizedError:
            return CLIFailure(String(describing: categorized), status: ExitStatus(categorized.category))
        default: return CLIFailure(String(describing: error), status: .software)
        }
    }
}
