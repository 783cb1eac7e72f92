import TSModels

/// The time a QRing central writes of its own: the ring's clock in a time set (`01`), BCD local
/// time, read as seconds since 1970 in the ring's zone (`wallClock`), which runs as the central's clock does.
public struct QRingCentralTimes: CentralTimeReader {
    public init() {}

    public func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes? {
        guard channel == .main, let packet = try? QRingPacket(bytes: bytes), packet.command == QRingCommand.setTime else { return nil }
        let parts = packet.data.prefix(6).map(Self.fromBCD)
        guard parts.count == 6, !parts.contains(nil) else { return nil }
        let (year, month, day, hour, minute, second) = (parts[0]! + 2000, parts[1]!, parts[2]!, parts[3]!, parts[4]!, parts[5]!)
        let wall = RingDate(year: year, month: month, day: day).daysSince1970 * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        let rest = QRingPacket(command: packet.command, data: [0, 0, 0, 0, 0, 0] + Array(packet.data.dropFirst(6)))
        return CentralTimes(rest: rest.bytes, fields: [.init(.wallClock, wall)])
    }

    static func fromBCD(_ byte: UInt8) -> Int? {
        let high = Int(byte >> 4), low = Int(byte & 0x0F)
        return high < 10 && low < 10 ? high * 10 + low : nil
    }
}
