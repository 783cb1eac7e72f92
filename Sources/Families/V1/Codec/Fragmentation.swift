import TSGATT
/// Cuts a byte stream into ATT-sized chunks (wire-protocol.md §3).
public enum Fragmenter {
    /// `bytes` in chunks of at most `mtu.chunkSize` bytes, in order.
    public static func chunks(of bytes: [UInt8], mtu: ATTMTU) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: mtu.chunkSize).map { start in
            Array(bytes[start..<min(start + mtu.chunkSize, bytes.count)])
        }
    }

    /// Several frames packed back to back into as few chunks as possible.
    public static func chunks(of frames: [Frame], mtu: ATTMTU) throws(ProtocolError) -> [[UInt8]] {
        var stream: [UInt8] = []
        for frame in frames { stream += try frame.encoded() }
        return chunks(of: stream, mtu: mtu)
    }
}
