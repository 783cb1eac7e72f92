import CBluetooth
import Foundation
import TSSnoop

/// The kernel's HCI monitor channel (HCI_CHANNEL_MONITOR on a raw HCI socket bound to
/// HCI_DEV_NONE), the stream btmon reads: every controller's commands, events and data, their
/// arrival and removal, and the kernel's and bluetoothd's notes, each stamped by the kernel.
/// Read-only: it changes nothing for bluetoothd. Needs CAP_NET_RAW.
public final class HCIMonitor: @unchecked Sendable {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 6 + 65_536)
    private var control = [UInt8](repeating: 0, count: 128)

    public init() throws(HCIError) {
        let socketFD = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard socketFD >= 0 else { throw HCIMonitor.failure("socket(AF_BLUETOOTH)") }
        var on: Int32 = 1
        _ = setsockopt(socketFD, SOL_SOCKET, SO_TIMESTAMP, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_MONITOR)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let error = HCIMonitor.failure("bind(HCI_CHANNEL_MONITOR)")
            close(socketFD)
            throw error
        }
        fd = socketFD
    }

    deinit { close(fd) }

    /// The next record, or nil when none came within `timeoutMilliseconds` (or a signal interrupted the wait).
    public func next(timeoutMilliseconds: Int32) throws(HCIError) -> HCIPacket? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        if ready == 0 || (ready < 0 && errno == EINTR) { return nil }
        guard ready > 0 else { throw HCIMonitor.failure("poll") }
        let bufferCount = buffer.count, controlCount = control.count
        var received = 0
        var seconds = 0, microseconds = 0
        buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: bufferCount)
                withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlCount
                    received = recvmsg(fd, &message, 0)
                    guard received >= 0, let header = tsg_cmsg_firsthdr(&message),
                          header.pointee.cmsg_level == SOL_SOCKET, header.pointee.cmsg_type == SO_TIMESTAMP,
                          let payload = tsg_cmsg_data(header) else { return }
                    let stamp = UnsafeRawPointer(payload).loadUnaligned(as: timeval.self)
                    seconds = stamp.tv_sec
                    microseconds = stamp.tv_usec
                }
            }
        }
        if received < 0 {
            if errno == EINTR || errno == EAGAIN { return nil }
            throw HCIMonitor.failure("recvmsg")
        }
        guard received >= 6 else { return nil }
        if seconds == 0 {
            var now = timeval()
            gettimeofday(&now, nil)
            seconds = now.tv_sec
            microseconds = now.tv_usec
        }
        let opcode = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
        let index = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
        let length = min(Int(UInt16(buffer[4]) | UInt16(buffer[5]) << 8), received - 6)
        return HCIPacket(index: index, rawOpcode: opcode, data: Array(buffer[6..<6 + length]), unixMicroseconds: Int64(seconds) * 1_000_000 + Int64(microseconds))
    }

    static func failure(_ call: String) -> HCIError {
        let code = errno
        if code == EPERM || code == EACCES {
            return .permission("reading the HCI monitor channel needs CAP_NET_RAW; \(HCIError.privilegeHint)")
        }
        if code == EAFNOSUPPORT {
            return .noAdapter("this kernel has no Bluetooth support (\(call): address family not supported)")
        }
        return .system(call: call, errno: code, message: String(cString: strerror(code)))
    }
}
