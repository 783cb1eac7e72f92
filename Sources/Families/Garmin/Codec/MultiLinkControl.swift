/// The multi-link control messages on handle 0 (protocol-spec/garmin/garmin.md §2.1): the host
/// closes what a phone before it left open, then registers the services it wants and is given a
/// handle for each.
public enum MultiLinkControl: Sendable, Hashable {
    case registerRequest(client: UInt64, service: UInt16, reliable: UInt8)
    case registerResponse(client: UInt64, service: UInt16, status: UInt8, handle: UInt8, reliable: UInt8)
    case closeHandleRequest(client: UInt64, service: UInt16, handle: UInt8)
    case closeHandleResponse(client: UInt64, service: UInt16, handle: UInt8, status: UInt8)
    case closeAllRequest(client: UInt64)
    case closeAllResponse(client: UInt64)

    /// The client ID Gadgetbridge and garmin-bridge send, and the only one they take answers for.
    public static let hostClient: UInt64 = 2
    /// The handle the control messages go on.
    public static let controlHandle: UInt8 = 0

    /// Service codes (§2.1).
    public enum Service {
        public static let gfdi: UInt16 = 1
        public static let registration: UInt16 = 4
        public static let realtimeHeartRate: UInt16 = 6
    }

    public var client: UInt64 {
        switch self {
        case let .registerRequest(client, _, _), let .registerResponse(client, _, _, _, _), let .closeHandleRequest(client, _, _),
             let .closeHandleResponse(client, _, _, _), let .closeAllRequest(client), let .closeAllResponse(client): client
        }
    }

    /// The message as written or notified on handle 0, the handle byte included. CLOSE_ALL_REQ is
    /// Gadgetbridge's and garmin-bridge's layout (`00 05 client 00 00`).
    public var bytes: [UInt8] {
        let body: [UInt8] = switch self {
        case let .registerRequest(client, service, reliable): [0] + le64(client) + le16(service) + [reliable]
        case let .registerResponse(client, service, status, handle, reliable): [1] + le64(client) + le16(service) + [status, handle, reliable]
        case let .closeHandleRequest(client, service, handle): [2] + le64(client) + le16(service) + [handle]
        case let .closeHandleResponse(client, service, handle, status): [3] + le64(client) + le16(service) + [handle, status]
        case let .closeAllRequest(client): [5] + le64(client) + [0, 0]
        case let .closeAllResponse(client): [6] + le64(client) + [0, 0]
        }
        return [Self.controlHandle] + body
    }

    /// A control message from its bytes, the handle byte (0) included. CLOSE_ALL_REQ is read in
    /// both layouts clients send (§2.1): the client in bytes 2–9, or, after two zero bytes, in
    /// 4–11 (garmin-ble 0.3.2). A REGISTER_ML_RESP without its reliable byte reads as 0, a
    /// CLOSE_ALL_RESP without its client (garmin-ble's simulated watch: `00 06`) as client 0.
    public init(bytes: [UInt8]) throws(GarminError) {
        guard bytes.count >= 2 else {
            throw GarminError(.controlTooShort, "a multi-link control message of \(bytes.count) byte(s); it starts with the handle and a type")
        }
        func need(_ count: Int, _ what: String) throws(GarminError) {
            guard bytes.count >= count else {
                throw GarminError(.controlTooShort, "a multi-link \(what) of \(bytes.count) bytes; it has at least \(count)")
            }
        }
        func client(at offset: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) } }
        func service(at offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        guard bytes[0] == Self.controlHandle else {
            throw GarminError(.unknownControl, "a control message on handle \(bytes[0]); control messages go on handle 0")
        }
        switch bytes[1] {
        case 0:
            try need(13, "REGISTER_ML_REQ")
            self = .registerRequest(client: client(at: 2), service: service(at: 10), reliable: bytes[12])
        case 1:
            try need(14, "REGISTER_ML_RESP")
            self = .registerResponse(client: client(at: 2), service: service(at: 10), status: bytes[12], handle: bytes[13],
                                     reliable: bytes.count > 14 ? bytes[14] : 0)
        case 2:
            try need(13, "CLOSE_HANDLE_REQ")
            self = .closeHandleRequest(client: client(at: 2), service: service(at: 10), handle: bytes[12])
        case 3:
            try need(14, "CLOSE_HANDLE_RESP")
            self = .closeHandleResponse(client: client(at: 2), service: service(at: 10), handle: bytes[12], status: bytes[13])
        case 5:
            try need(10, "CLOSE_ALL_REQ")
            // garmin-ble 0.3.2: `00 05 00 00 client 00`; no client of the others is 0 in its low two bytes.
            let shifted = bytes.count >= 12 && bytes[2] == 0 && bytes[3] == 0
            self = .closeAllRequest(client: client(at: shifted ? 4 : 2))
        case 6:
            // garmin-ble 0.3.2's simulated watch answers `00 06` alone: no client, read as 0.
            self = .closeAllResponse(client: bytes.count >= 10 ? client(at: 2) : 0)
        default:
            throw GarminError(.unknownControl, "multi-link control type \(bytes[1]) is none of 0, 1, 2, 3, 5, 6")
        }
    }
}

func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8((value >> (8 * $0)) & 0xFF) } }
