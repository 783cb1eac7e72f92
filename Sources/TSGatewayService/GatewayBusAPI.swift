import Foundation
import TSDBus
import TSDevice
import TSModels
import TSStore
import TSSleep

/// Names and encodings of the daemon's D-Bus API (documented in protocol-spec/dbus-api.md).
/// Documents with nested structure (alarm tables, monitor configs, daily sleep, sessions)
/// travel as JSON strings in the same shape as the CLI's `--json` output; flat state is typed.
public enum GatewayBusAPI {
    public static let busName = "org.tsgateway"
    public static let rootPath = "/org/tsgateway"
    public static let gatewayInterface = "org.tsgateway.Gateway1"
    public static let watchInterface = "org.tsgateway.Watch1"
    public static let errorPrefix = "org.tsgateway.Error."

    /// `/org/tsgateway/watch_AABBCCDDEEFF` for AA:BB:CC:DD:EE:FF.
    public static func path(forWatch id: String) -> String {
        rootPath + "/watch_" + id.uppercased().filter { $0.isHexDigit }
    }

    /// Error names the service replies with; the CLI maps each to an exit status.
    public enum ErrorName: String, Sendable, CaseIterable {
        case notConnected = "NotConnected"
        case timeout = "Timeout"
        case protocolError = "Protocol"
        case invalidArguments = "InvalidArguments"
        case notSupported = "NotSupported"
        case storage = "Storage"
        case failed = "Failed"

        public var fullName: String { GatewayBusAPI.errorPrefix + rawValue }
    }

    static func busError(_ error: any Error) -> BusError {
        switch error {
        case let busError as BusError: return busError
        case let watchError as WatchError:
            let name: ErrorName = switch watchError {
            case .notConnected, .connectFailed, .disconnected: .notConnected
            case .timeout, .transferAbandoned: .timeout
            case .rejected, .protocolViolation: .protocolError
            case .invalidAlarms, .invalidMonitorConfig: .invalidArguments
            case .unsupported: .notSupported
            }
            return BusError(name: name.fullName, message: watchError.description)
        case let storeError as StoreError: return BusError(name: ErrorName.storage.fullName, message: storeError.description)
        case is DecodingError: return BusError(name: ErrorName.invalidArguments.fullName, message: "the JSON argument is not valid: \(error)")
        case is CancellationError: return BusError(name: ErrorName.failed.fullName, message: "the gateway is stopping")
        default: return BusError(name: ErrorName.failed.fullName, message: String(describing: error))
        }
    }

    // MARK: JSON

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    public static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public static func decode<T: Decodable>(_ type: T.Type, json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(json.utf8))
    }
}

/// SyncSleep's answer.
public struct SyncResult: Sendable, Codable, Hashable {
    public var fetched: Int
    public var stored: Int
    public var deletedOnWatch: Int
    public var reconnects: Int

    public init(fetched: Int, stored: Int, deletedOnWatch: Int, reconnects: Int) {
        self.fetched = fetched
        self.stored = stored
        self.deletedOnWatch = deletedOnWatch
        self.reconnects = reconnects
    }
}

/// DailySleep's answer, the shape of `sleep show --json`.
public struct DailySleepReport: Sendable, Codable {
    public var watch: String
    public var timeZone: String
    public var rule: Int
    public var days: [DailySleepModel]
}

/// GetSession's answer: the open or latest session and its stage events.
public struct SessionReport: Sendable, Codable, Hashable {
    public var watch: String
    public var session: LiveSleepSession?
    public var stages: [LiveStageRecord]

    public init(watch: String, session: LiveSleepSession?, stages: [LiveStageRecord]) {
        self.watch = watch
        self.session = session
        self.stages = stages
    }
}
