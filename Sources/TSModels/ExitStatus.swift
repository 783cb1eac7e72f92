/// The exit statuses of `tsgateway`: the project's one table of them (README "Exit codes" lists
/// the same). Values follow sysexits(3) where one fits, so scripts can tell a usage error from a
/// missing adapter from a timeout. An error category's status is `ExitStatus(category)`.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// Any other failure: an error no layer gave a category (`ErrorCategory.failed`), or a
    /// cancelled operation.
    case failure = 1
    /// Bad command line (argument-parser's own validation errors use this too).
    case usage = 64
    /// Input data is wrong: a bad JSON/CSV row, bad hex, an alarm or setting the watch cannot hold.
    case dataError = 65
    /// An input file is missing or unreadable.
    case noInput = 66
    /// No Bluetooth adapter, no bluetoothd on the bus, adapter powered off, the watch out of reach.
    case unavailable = 69
    /// An internal error (the daemon's service group stopped, an encoder failed).
    case software = 70
    /// I/O error: the database, a file that cannot be written.
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
    /// The disk holding the gateway's data is full: nothing was acknowledged to the watch.
    case storageFull = 82
    /// The disk holding the gateway's data is read-only: nothing was acknowledged to the watch.
    case storageReadOnly = 83
}

extension ExitStatus {
    /// The status of an error category, through either front door.
    public init(_ category: ErrorCategory) {
        switch category {
        case .unavailable: self = .unavailable
        case .deviceNotFound: self = .deviceNotFound
        case .notPaired: self = .notPaired
        case .timeout: self = .timeout
        case .protocolError: self = .protocolError
        case .invalidInput: self = .dataError
        case .notSupported: self = .notSupported
        case .storage: self = .ioError
        case .storageFull: self = .storageFull
        case .storageReadOnly: self = .storageReadOnly
        case .permission: self = .permission
        case .cancelled, .failed: self = .failure
        }
    }

    /// The status of any error: its category's (`ErrorCategory.of`), so an error no layer gave a
    /// category exits 1 (`failed`), as the same error does through `tsgateway serve`.
    public static func of(_ error: any Error) -> ExitStatus {
        ExitStatus(ErrorCategory.of(error))
    }
}
