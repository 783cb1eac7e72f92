import TSModels

/// What `tsgateway capture` keeps. With a controller index, only that controller's records
/// and the records of no controller (kernel notes, bluetoothd's log lines). With a device
/// address, only that device's connections' ACL, SCO and ISO data — connection handles are
/// learned from LE (Enhanced) Connection Complete events for that address and forgotten at
/// Disconnection Complete — and of the advertising reports only those naming the device;
/// every other command and event, controller lifecycle and management record is kept, since
/// they show how the connection came about and how it ended.
public struct CaptureFilter: Sendable {
    public let index: UInt16?
    public let device: BluetoothAddress?
    private var handles: Set<ConnectionKey> = []

    public init(index: UInt16? = nil, device: BluetoothAddress? = nil) {
        self.index = index
        self.device = device
    }

    /// Follows a connection that was up before the capture started (its Connection Complete
    /// event is not in the capture).
    public mutating func track(_ connection: ConnectionKey) { handles.insert(connection) }

    /// The connections of the device in force now.
    public var deviceConnections: Set<ConnectionKey> { handles }

    public mutating func keep(_ packet: HCIPacket) -> Bool {
        if let index, packet.index != index, packet.index != HCIPacket.noIndex { return false }
        guard let device else { return true }
        switch packet.kind {
        case .event:
            switch HCIEvent(packet: packet.data) {
            case let .leConnectionComplete(status, handle, _, peer, _, _, _):
                if status == 0, peer == device { handles.insert(ConnectionKey(index: packet.index, handle: handle)) }
                return true
            case let .disconnectionComplete(status, handle, _):
                if status == 0 { handles.remove(ConnectionKey(index: packet.index, handle: handle)) }
                return true
            case let .leAdvertisingReport(parameters):
                return parameters.contains(subsequence: device.littleEndian)
            default:
                return true
            }
        case .aclTX, .aclRX, .scoTX, .scoRX, .isoTX, .isoRX:
            guard packet.data.count >= 2 else { return false }
            return handles.contains(ConnectionKey(index: packet.index, handle: packet.data.littleEndianUInt16(at: 0) & 0x0FFF))
        default:
            return true
        }
    }
}

/// One connection in a capture: the controller index, the HCI connection handle, and which of the
/// links that handle carried in turn (a controller gives the next link the handle the last one
/// left: a session of several commands has as many links on one handle).
public struct ConnectionKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var index: UInt16
    public var handle: UInt16
    /// 0 for the first link on the handle, 1 for the one after its disconnection, …
    public var link: Int

    public init(index: UInt16, handle: UInt16, link: Int = 0) {
        self.index = index
        self.handle = handle
        self.link = link
    }

    public static func < (a: ConnectionKey, b: ConnectionKey) -> Bool { (a.index, a.handle, a.link) < (b.index, b.handle, b.link) }

    public var description: String { "hci\(index) handle \(handle)\(link > 0 ? ", link \(link + 1)" : "")" }
}

extension [UInt8] {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start..<start + needle.count].elementsEqual(needle) { return true }
        return false
    }
}
