import Foundation
import TSModels

/// A day's heart-rate log, assembled.
public enum HeartRateLog: Sendable, Hashable {
    /// Samples in slot order; slots without a reading (0 or 0xFF) are left out.
    case samples([HeartRateSample], slotMinutesReported: Int)
    /// The ring has no log for that day.
    case noData
}

/// Collects the packets of one heart-rate log answer (command 0x15) for the day the gateway asked
/// for and turns its 288 five-minute slots into samples, each slot's wall-clock time read in
/// `zone` (protocol-spec/qring/qring.md §4.1). The caller's timeout ends an answer that stops early.
///
/// Until packet 0 has come, a packet with another index is the tail of an earlier answer the
/// central stopped waiting for (the ring finishes an answer it began, and a request is never
/// sent again): it is dropped, not read as a loss in this answer. A whole earlier answer (a ring
/// that answered a request twice, the copy meeting the next day's request) shows its day in
/// packet 1: it is passed over the same way, and this answer starts again at its own packet 0
/// (`passedOver` says which day's log went by, for a caller whose wait then ends).
public struct HeartRateLogAssembler: Sendable {
    public static let slotsPerDay = 288
    public static let slotMinutes = 5

    public let day: RingDate
    public let zone: TimeZone
    private var count: Int?
    private var nextIndex = 0
    private var slotMinutesReported = 0
    private var values: [UInt8] = []
    /// The day of the last whole answer passed over as another request's; nil: none so far.
    public private(set) var passedOver: RingDate?

    public init(day: RingDate, zone: TimeZone) {
        self.day = day
        self.zone = zone
    }

    /// Nil while more packets are due; the log once the last one arrived.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(QRingError) -> HeartRateLog? {
        let packet = try QRingPacket(bytes: bytes)
        guard packet.command == QRingCommand.heartRateLog else {
            throw QRingError(.unexpectedCommand, "command \(hex(packet.command)) arrived inside a heart-rate log")
        }
        let data = packet.data
        let index = Int(data[0])
        if index == 0xFF { return .noData }
        if nextIndex == 0, index != 0 { return nil }
        guard index == nextIndex else {
            throw QRingError(.outOfOrder, "heart-rate log packet \(index) arrived where \(nextIndex) was due; a packet was lost")
        }
        switch index {
        case 0:
            guard data[1] >= 2 else { throw QRingError(.valueOutOfRange, "a heart-rate log of \(data[1]) packets (at least 2)") }
            count = Int(data[1])
            slotMinutesReported = Int(data[2])
        case 1:
            let stamp = u32(data, 1)
            guard stamp / 86400 == day.wallSeconds / 86400 else {
                passedOver = RingDateTime(wallSeconds: stamp).date
                (count, nextIndex, slotMinutesReported, values) = (nil, 0, 0, [])
                return nil
            }
            values += data[5..<14]
        default:
            values += data[1..<14]
        }
        nextIndex += 1
        guard let count, nextIndex == count else { return nil }
        return .samples(samples(), slotMinutesReported: slotMinutesReported)
    }

    private func samples() -> [HeartRateSample] {
        values.prefix(Self.slotsPerDay).enumerated().compactMap { slot, value in
            guard value != 0, value != 0xFF else { return nil }
            let wall = day.wallSeconds + Int64(slot * Self.slotMinutes * 60)
            let time = Date(timeIntervalSince1970: TimeInterval(RingClock.instant(ofWall: wall, in: zone)))
            return HeartRateSample(time: time, bpm: Int(value))
        }
    }
}
