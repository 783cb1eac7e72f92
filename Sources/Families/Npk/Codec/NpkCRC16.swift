/// CRC-16/ARC, the checksum of an NPK frame's payload: polynomial 0x8005 (reflected 0xA001),
/// initial value 0, input and output reflected, no final xor. Check value: 0xBB3D for "123456789".
public enum NpkCRC16 {
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        return crc
    }

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes { crc = (crc >> 8) ^ table[Int((crc ^ UInt16(byte)) & 0xFF)] }
        return crc
    }

    /// What a frame carries in its CRC field: the checksum, 0 for an empty payload.
    public static func frameField(_ payload: [UInt8]) -> UInt16 { payload.isEmpty ? 0 : checksum(payload) }
}
