import CBluetooth
import Foundation

/// LE connection parameters in the units HCI uses: intervals in 1.25 ms, supervision timeout in 10 ms.
public struct LEConnectionParameters: Sendable, Hashable {
    public var minInterval: UInt16
    public var maxInterval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(minInterval: UInt16, maxInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// For a bulk transfer: 7.5–15 ms, no peripheral latency, 2 s supervision timeout.
    public static let bulk = LEConnectionParameters(minInterval: 6, maxInterval: 12, latency: 0, supervisionTimeout: 200)
    /// Relaxed again afterwards: the Linux kernel's defaults for a new LE link (30–50 ms, 420 ms timeout).
    public static let relaxed = LEConnectionParameters(minInterval: 24, maxInterval: 40, latency: 0, supervisionTimeout: 42)

    /// An interval in 1.25 ms units as milliseconds.
    public static func milliseconds(interval: UInt16) -> Double { Double(interval) * 1.25 }
}

/// The parameters in force after an LE Connection Update Complete.
public struct LEConnectionUpdate: Sendable, Hashable {
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
}

/// Asks the controller for other connection parameters on a link the kernel holds, with the HCI
/// LE Connection Update command on the link's handle. BlueZ has no D-Bus API for this; the
/// command goes from the host's controller, so bluetoothd is not involved and keeps its own
/// stored parameters for the next connection. The kernel sends LE commands from a raw socket
/// only for CAP_NET_RAW; without it this throws `.permission`.
public enum ConnectionParameters {
    /// The HCI handle of the LE link to `address` on `adapter`.
    public static func handle(adapter: String, address: String) throws(HCIError) -> UInt16 {
        let index = try adapterIndex(adapter)
        var peer = bdaddr_t()
        guard str2ba(address, &peer) == 0 else { throw .notConnected("\(address) is not a Bluetooth address") }
        let fd = hci_open_dev(Int32(index))
        guard fd >= 0 else { throw Controller.failure("opening \(adapter)", adapter: adapter) }
        defer { close(fd) }
        let offset = MemoryLayout<hci_conn_info_req>.size
        var request = [UInt8](repeating: 0, count: offset + MemoryLayout<hci_conn_info>.size)
        withUnsafeBytes(of: peer.b) { request.replaceSubrange(0..<6, with: $0) }
        request[6] = 0x80  // the kernel's LE_LINK type (libbluetooth's headers name only ACL and SCO links)
        let result = request.withUnsafeMutableBytes { bytes in
            bytes.withMemoryRebound(to: hci_conn_info_req.self) { tsg_hci_get_conn_info(fd, $0.baseAddress) }
        }
        guard result == 0 else {
            if errno == ENOENT { throw .notConnected("\(adapter) has no LE link to \(address)") }
            throw Controller.failure("HCIGETCONNINFO", adapter: adapter)
        }
        return UInt16(request[offset]) | UInt16(request[offset + 1]) << 8
    }

    /// Sends LE Connection Update and waits for its Complete event (up to `timeoutMilliseconds`).
    public static func update(adapter: String, handle: UInt16, to parameters: LEConnectionParameters, timeoutMilliseconds: Int32 = 5000) throws(HCIError) -> LEConnectionUpdate {
        let index = try adapterIndex(adapter)
        let fd = hci_open_dev(Int32(index))
        guard fd >= 0 else { throw Controller.failure("opening \(adapter)", adapter: adapter) }
        defer { close(fd) }
        var command = le_connection_update_cp()
        command.handle = handle
        command.min_interval = parameters.minInterval
        command.max_interval = parameters.maxInterval
        command.latency = parameters.latency
        command.supervision_timeout = parameters.supervisionTimeout
        command.min_ce_length = 0
        command.max_ce_length = 0
        var complete = [UInt8](repeating: 0, count: 9)  // status, handle, interval, latency, timeout
        let result = withUnsafeMutablePointer(to: &command) { commandPointer in
            complete.withUnsafeMutableBytes { completeBytes in
                var request = hci_request()
                request.ogf = UInt16(OGF_LE_CTL)
                request.ocf = UInt16(OCF_LE_CONN_UPDATE)
                request.event = Int32(EVT_LE_CONN_UPDATE_COMPLETE)
                request.cparam = UnsafeMutableRawPointer(commandPointer)
                request.clen = Int32(LE_CONN_UPDATE_CP_SIZE)
                request.rparam = completeBytes.baseAddress
                request.rlen = Int32(completeBytes.count)
                return hci_send_req(fd, &request, timeoutMilliseconds)
            }
        }
        guard result == 0 else { throw Controller.failure("LE Connection Update", adapter: adapter) }
        guard complete[0] == 0 else { throw .commandFailed(command: "LE Connection Update", status: complete[0]) }
        return LEConnectionUpdate(
            interval: UInt16(complete[3]) | UInt16(complete[4]) << 8,
            latency: UInt16(complete[5]) | UInt16(complete[6]) << 8,
            supervisionTimeout: UInt16(complete[7]) | UInt16(complete[8]) << 8)
    }
}
