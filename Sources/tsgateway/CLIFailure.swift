import TSModels

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
        // Its category's status, as through `tsgateway serve`: an error without one exits 1.
        default: return CLIFailure(String(describing: error), status: ExitStatus.of(error))
        }
    }
}
