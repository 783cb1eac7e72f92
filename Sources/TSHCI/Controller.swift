import CBluetooth
import Foundation

/// What a controller says about itself, read with HCI commands on a raw socket bound to it
/// (Read Local Version Information, Read BD_ADDR, LE Read Local Supported Features). These
/// commands only read: bluetoothd is not disturbed.
public struct ControllerInfo: Sendable, Hashable, Codable {
    public var adapter: String
    public var address: String
    /// "public", or "random" when the controller has no public address (bluetoothd then sets a static random one).
    public var addressType: String
    /// The HCI version number and its Core specification name ("5.2").
    public var hciVersion: Int
    public var bluetoothVersion: String
    public var hciRevision: Int
    public var lmpVersion: Int
    public var lmpSubversion: Int
    public var manufacturer: Int
    public var manufacturerName: String
    /// Page 0 of the LE features, nil when they could not be read (no CAP_NET_RAW).
    public var leFeatureMask: UInt64?
    public var leFeatures: [String]?
    /// Why the LE features are missing.
    public var leFeaturesNote: String?

    /// The Core specification version of an HCI/LMP version number (Assigned Numbers, "Core Version").
    public static func versionName(_ version: Int) -> String {
        let names = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1"]
        return names.indices.contains(version) ? names[version] : "unknown (\(version))"
    }

    /// The names of the set bits of LE feature page 0 (Core Vol 6 Part B 4.6); unnamed bits as "bit N".
    public static func leFeatureNames(_ mask: UInt64) -> [String] {
        let names = [
            "LE Encryption", "Connection Parameters Request", "Extended Reject Indication", "Peripheral-initiated Features Exchange",
            "LE Ping", "Data Length Extension", "LL Privacy", "Extended Scanner Filter Policies", "2M PHY",
            "Stable Modulation Index (TX)", "Stable Modulation Index (RX)", "Coded PHY", "Extended Advertising",
            "Periodic Advertising", "Channel Selection Algorithm #2", "LE Power Class 1", "Minimum Number of Used Channels",
        ]
        return (0..<64).filter { mask >> UInt64($0) & 1 == 1 }.map { $0 < names.count ? names[$0] : "bit \($0)" }
    }
}

public enum Controller {
    /// Reads a controller's version, manufacturer, address and LE features. Without CAP_NET_RAW
    /// the kernel lets the version and address through but not LE commands; the LE features are
    /// then left out with a note.
    public static func info(adapter name: String, timeoutMilliseconds: Int32 = 2000) throws(HCIError) -> ControllerInfo {
        let index = try adapterIndex(name)
        let fd = hci_open_dev(Int32(index))
        guard fd >= 0 else { throw failure("opening \(name)", adapter: name) }
        defer { close(fd) }
        var version = hci_version()
        guard hci_read_local_version(fd, &version, timeoutMilliseconds) == 0 else { throw failure("Read Local Version Information", adapter: name) }
        var address = bdaddr_t()
        guard hci_read_bd_addr(fd, &address, timeoutMilliseconds) == 0 else { throw failure("Read BD_ADDR", adapter: name) }
        let bytes = withUnsafeBytes(of: address.b) { Array($0) }
        let isZero = bytes.allSatisfy { $0 == 0 }
        var info = ControllerInfo(
            adapter: name,
            address: bytes.reversed().map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":"),
            addressType: isZero ? "random" : "public",
            hciVersion: Int(version.hci_ver), bluetoothVersion: ControllerInfo.versionName(Int(version.hci_ver)),
            hciRevision: Int(version.hci_rev), lmpVersion: Int(version.lmp_ver), lmpSubversion: Int(version.lmp_subver),
            manufacturer: Int(version.manufacturer), manufacturerName: String(cString: bt_compidtostr(Int32(version.manufacturer))))
        do {
            let mask = try leFeatures(fd: fd, timeoutMilliseconds: timeoutMilliseconds)
            info.leFeatureMask = mask
            info.leFeatures = ControllerInfo.leFeatureNames(mask)
        } catch let error {
            info.leFeaturesNote = error.description
        }
        return info
    }

    /// LE Read Local Supported Features: status, then the 8-byte mask, least significant first.
    private static func leFeatures(fd: Int32, timeoutMilliseconds: Int32) throws(HCIError) -> UInt64 {
        var reply = [UInt8](repeating: 0, count: 9)
        let result = reply.withUnsafeMutableBytes { replyBytes in
            var request = hci_request()
            request.ogf = UInt16(OGF_LE_CTL)
            request.ocf = UInt16(OCF_LE_READ_LOCAL_SUPPORTED_FEATURES)
            request.rparam = replyBytes.baseAddress
            request.rlen = Int32(replyBytes.count)
            return hci_send_req(fd, &request, timeoutMilliseconds)
        }
        guard result == 0 else {
            if errno == EPERM || errno == EACCES {
                throw .permission("LE features need CAP_NET_RAW; \(HCIError.privilegeHint)")
            }
            throw .system(call: "LE Read Local Supported Features", errno: errno, message: String(cString: strerror(errno)))
        }
        guard reply[0] == 0 else { throw .commandFailed(command: "LE Read Local Supported Features", status: reply[0]) }
        return reply[1...8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func failure(_ what: String, adapter: String) -> HCIError {
        let code = errno
        switch code {
        case ENODEV: return .noAdapter("there is no Bluetooth adapter \(adapter)")
        case ENETDOWN: return .noAdapter("\(adapter) is down; switch it on with: tsgateway adapter power on --adapter \(adapter)")
        case EPERM, EACCES: return .permission("\(what) on \(adapter) was refused; \(HCIError.privilegeHint)")
        case EAFNOSUPPORT: return .noAdapter("this kernel has no Bluetooth support")
        default: return .system(call: "\(what) on \(adapter)", errno: code, message: String(cString: strerror(code)))
        }
    }
}
