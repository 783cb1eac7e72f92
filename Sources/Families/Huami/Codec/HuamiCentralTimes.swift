import TSModels

/// The times a Huami central writes of its own: the band's clock it sets (Current Time, §3) and
/// the start of an activity fetch (§7.1; the first one 12 hours before the sync's range, the next
/// ones where a transfer ended). The zone and the other bytes must be the recorded ones.
public struct HuamiCentralTimes: CentralTimeReader {
    public init() {}

    public func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes? {
        switch channel.characteristic?.uuid {
        case HuamiGATT.currentTime:
            guard let time = try? HuamiTime(currentTimeBytes: bytes) else { return nil }
            // The zone and the adjust reason (byte 9) are not the clock's.
            return CentralTimes(rest: [bytes[10], bytes[9]], fields: [.init(.clock, time.unixSeconds)])
        case HuamiGATT.fetchControl:
            guard case let .start(type, since)? = try? HuamiFetchRequest(bytes: bytes) else { return nil }
            return CentralTimes(rest: [type, UInt8(truncatingIfNeeded: since.zoneQuarterHours), UInt8(bytes.count)], fields: [.init(.rangeStart, since.unixSeconds)])
        default:
            return nil
        }
    }
}
