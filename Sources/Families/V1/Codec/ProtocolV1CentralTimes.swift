import TSModels

/// The time a protocol v1 central writes of its own: the clock of TIME_SET (its `utc`; the
/// offset and the zone's name must be the recorded ones). A request written in one frame; the
/// sync's query carries the range's start as given and no end.
public struct ProtocolV1CentralTimes: CentralTimeReader {
    public init() {}

    public func centralTimes(in bytes: [UInt8], channel: CaptureChannel) -> CentralTimes? {
        guard channel == .main, let frame = try? Frame.decode(bytes), case let .timeSetRequest(set)? = try? Message(frame: frame),
              let rest = try? Message.timeSetRequest(TimeSet(utc: 0, utcOffset: set.utcOffset, zone: set.zone)).frame(sequence: frame.sequence).encoded()
        else { return nil }
        return CentralTimes(rest: rest, fields: [.init(.clock, Int64(set.utc))])
    }
}
