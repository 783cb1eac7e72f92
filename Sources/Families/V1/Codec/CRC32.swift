/// CRC-32/ISO-HDLC (zlib's CRC): reflected polynomial 0xEDB88320, init and xorout 0xFFFFFFFF.
/// Check value: `CRC32.checksum("123456789".utf8) == 0xCBF43926`.
/// Computed eight bytes at a time ("slicing-by-8") because it runs over every received byte.
public enum CRC32 {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][byte]
                tables[slice][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private static let flatTable: [UInt32] = tables.flatMap { $0 }

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBufferPointer { checksum($0) }
    }

    public static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        // The slice-by-8 step in typed parts: Swift 6.2's type checker (Debian's, the arm64
        // package's compiler) gave up on it as one expression ("unable to type-check this
        // expression in reasonable time"); 6.3 took it whole.
        flatTable.withUnsafeBufferPointer { (table: UnsafeBufferPointer<UInt32>) -> UInt32 in
            var crc: UInt32 = 0xFFFF_FFFF
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let word: UInt32 = UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
                let low: UInt32 = crc ^ word
                let first: UInt32 = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                let second: UInt32 = table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
                    ^ table[1 * 256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
                crc = first ^ second
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ table[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
                index += 1
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
