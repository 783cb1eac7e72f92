/// Cuts a byte stream (one or more frames) into the values of ATT writes or notifications.
public enum NpkChunking {
    /// The stream bytes one ATT value carries at `mtu`: MTU − 3. A BlueZ central receiving
    /// Multiple Handle Value Notifications gets 2 bytes less per entry (topstep-npk.md section 4).
    public static func chunkSize(mtu: Int) -> Int { max(1, mtu - 3) }

    public static func chunks(_ stream: [UInt8], size: Int) -> [[UInt8]] {
        precondition(size > 0, "chunk size must be positive")
        return stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min($0 + size, stream.count)]) }
    }
}
