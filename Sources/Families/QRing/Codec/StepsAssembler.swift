import Foundation

/// Steps, calories and distance of one quarter-hour.
public struct RingStepsInterval: Sendable, Hashable {
    /// Unix time of the quarter-hour's start, its wall-clock time read in the zone.
    public var start: Int64
    /// The quarter-hour's start on the ring's clock.
    public var wall: RingDateTime
    public var steps: Int
    /// As the ring counts them; multiplied by 10 when its steps header says so.
    public var calories: Int
    public var distanceMeters: Int
}

/// Collects the packets of one steps answer (command 0x43) (protocol-spec/qring/qring.md §4).
public struct StepsAssembler: Sendable {
    public let zone: TimeZone
    private var caloriesTimes10: Bool?
    private var intervals: [RingStepsInterval] = []

    public init(zone: TimeZone) { self.zone = zone }

    /// Nil while more packets are due; the day's quarter-hours once the last one arrived.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(QRingError) -> [RingStepsInterval]? {
        let packet = try QRingPacket(bytes: bytes)
        guard packet.command == QRingCommand.steps else {
            throw QRingError(.unexpectedCommand, "command \(hex(packet.command)) arrived inside a steps answer")
        }
        let data = packet.data
        if data[0] == 0xFF { return [] }
        if data[0] == 0xF0 {
            caloriesTimes10 = data[2] == 1
            intervals = []
            return nil
        }
        guard let caloriesTimes10 else { throw QRingError(.outOfOrder, "a steps record arrived before the steps header") }
        let date = RingDate(year: 2000 + (try fromBCD(data[0], "year")), month: try fromBCD(data[1], "month"), day: try fromBCD(data[2], "day"))
        guard date.exists else { throw QRingError(.valueOutOfRange, "the steps record's date \(date) does not exist") }
        let quarter = Int(data[3])
        guard quarter <= 95 else { throw QRingError(.valueOutOfRange, "quarter-hour \(quarter) is outside 0…95") }
        let index = data[4], total = data[5]
        guard index < total else { throw QRingError(.valueOutOfRange, "steps record \(index) of \(total)") }
        let wall = RingDateTime(date: date, secondOfDay: quarter * 900)
        let calories = u16(data, 6)
        intervals.append(RingStepsInterval(
            start: RingClock.instant(ofWall: wall.wallSeconds, in: zone), wall: wall,
            steps: u16(data, 8), calories: caloriesTimes10 ? calories * 10 : calories, distanceMeters: u16(data, 10)))
        return index == total - 1 ? intervals : nil
    }
}
