/// A Bluetooth device address, written most significant byte first ("AA:BB:CC:DD:EE:FF").
/// The one parser of addresses: the CLI's arguments, the daemon's configuration, captures.
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    /// The six bytes as HCI carries them: least significant first.
    public let littleEndian: [UInt8]

    public init?(littleEndian bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        littleEndian = bytes
    }

    /// Parses "AA:BB:CC:DD:EE:FF" in any case; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        littleEndian = bytes.reversed()
    }

    /// Upper case, colons: how BlueZ, the configuration and the store write it.
    public var description: String {
        littleEndian.reversed().map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":")
    }
}
