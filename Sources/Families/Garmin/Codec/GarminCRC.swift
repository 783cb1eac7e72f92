/// CRC-16/ARC (reflected polynomial 0xA001, initial value 0, no final XOR): GFDI frames, the
/// running CRC of a file transfer and FIT files all use it (protocol-spec/garmin/garmin.md §3).
/// "123456789" gives 0xBB3D.
public enum GarminCRC {
    /// Reflected CRC-16 of one nibble, for the low nibble then the high one of each byte.
    static let nibbles: [UInt16] = (0..<16).map { nibble in
        var crc = UInt16(nibble)
        for _ in 0..<4 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        return crc
    }

    /// The CRC of `bytes`, continuing from `seed` (a transfer's running CRC passes the last value).
    public static func checksum(_ bytes: some Sequence<UInt8>, seed: UInt16 = 0) -> UInt16 {
        var crc = seed
        for byte in bytes {
            crc = (crc >> 4) ^ nibbles[Int((crc ^ UInt16(byte)) & 0xF)]
            crc = (crc >> 4) ^ nibbles[Int((crc ^ UInt16(byte >> 4)) & 0xF)]
        }
        return crc
    }
}
