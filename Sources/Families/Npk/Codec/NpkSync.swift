/// What a sync (05/21) asks for; each type's data comes as list frames of 05/<type>.
public enum NpkSyncType: Int32, Sendable, Hashable, CaseIterable {
    case heartRate = 1, spo2, bloodPressure, stress, sleep, activity, sport

    public var dataCommand: NpkCommand { NpkCommand(cmd: 0x05, key: UInt8(rawValue)) }

    public func startRequest(fromUnix start: Int64, toUnix end: Int64) throws -> TSMetaSyncStartRequest {
        var request = TSMetaSyncStartRequest()
        request.start = try NpkTime.t2000(fromUnix: start)
        request.end = try NpkTime.t2000(fromUnix: end)
        request.type = rawValue
        return request
    }
}

/// The answer to a sync start.
public enum NpkSyncStartResult: Sendable, Hashable {
    /// List frames follow, then the end of sync (05/22).
    case started
    /// Nothing changed since the requested start: not an error.
    case nothingNew
    case failed(result: Int32)

    public init(_ response: TSMetaSyncStartResponse) {
        switch response.result {
        case 0: self = .started
        case 1: self = .nothingNew
        default: self = .failed(result: response.result)
        }
    }
}
