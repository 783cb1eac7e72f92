/// What kind of failure an error is, whichever layer raised it. The CLI's exit status and the
/// daemon's `org.tsgateway.Error.*` name both come from here, so one failure reads the same
/// through either front door (README "Exit codes", protocol-spec/dbus-api.md "Errors").
public enum ErrorCategory: String, Sendable, Hashable, CaseIterable, Codable {
    /// The watch, the adapter or bluetoothd cannot be reached now.
    case unavailable = "NotConnected"
    /// No watch matches the address or name given, or BlueZ does not know the device.
    case deviceNotFound = "DeviceNotFound"
    /// The watch must be paired (again) first.
    case notPaired = "NotPaired"
    /// The watch or BlueZ did not answer in time.
    case timeout = "Timeout"
    /// The watch refused the request or broke the protocol.
    case protocolError = "Protocol"
    /// A request whose values are wrong: bad JSON, an alarm the watch cannot hold, bad dates.
    case invalidInput = "InvalidArguments"
    /// The watch lacks the feature asked for.
    case notSupported = "NotSupported"
    /// The database failed, or another process holds it.
    case storage = "Storage"
    /// The disk holding the gateway's data is full (`StorageUnwritable`).
    case storageFull = "StorageFull"
    /// The disk holding the gateway's data is read-only (`StorageUnwritable`).
    case storageReadOnly = "StorageReadOnly"
    /// D-Bus policy or file permissions refused the operation.
    case permission = "PermissionDenied"
    /// The operation was cancelled (the gateway is stopping, Ctrl-C).
    case cancelled = "Cancelled"
    /// Anything else.
    case failed = "Failed"

    /// The `tsgateway` exit status for this category (the table: `ExitStatus`).
    public var exitStatus: Int32 { ExitStatus(self).rawValue }
}

/// An error that knows its category. Errors of every layer conform, so no layer above has to
/// guess a category from an error's text.
public protocol CategorizedError: Error {
    var category: ErrorCategory { get }
}

extension ErrorCategory {
    /// The category of any error: its own when it has one, `cancelled` for a cancellation,
    /// `failed` otherwise.
    public static func of(_ error: any Error) -> ErrorCategory {
        if let categorized = error as? any CategorizedError { return categorized.category }
        if error is CancellationError { return .cancelled }
        return .failed
    }
}

/// An error that arrived already categorized (from the daemon's D-Bus API, an MQTT reply):
/// its category and the message a person reads.
public struct CategorizedFailure: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var category: ErrorCategory
    public var message: String

    public init(_ category: ErrorCategory, _ message: String) {
        self.category = category
        self.message = message
    }

    public var description: String { message }
}
