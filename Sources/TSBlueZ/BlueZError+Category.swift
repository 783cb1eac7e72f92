import TSModels

extension BlueZError: CategorizedError {
    public var category: ErrorCategory {
        switch self {
        case .noSystemBus, .noBluetoothd, .noAdapter, .adapterPoweredOff: .unavailable
        case .permissionDenied: .permission
        case .inProgress, .connectTimedOut, .disconnected: .timeout
        case .deviceNotFound: .deviceNotFound
        case .authenticationFailed: .notPaired
        case .failed: .failed
        }
    }
}
