import TSModels

/// Faults a loopback link applies to packets (ATT writes and notifications), deterministically
/// from `seed`: each packet is dropped, duplicated, corrupted or held back behind the next with
/// the given probabilities, and the link drops every `disconnectEvery` packets.
public struct FaultInjection: Sendable, Hashable {
    public var dropRate: Double
    public var duplicateRate: Double
    public var corruptRate: Double
    public var reorderRate: Double
    /// Delay before each packet is delivered.
    public var delay: Duration
    /// Drop the link after this many delivered packets (both directions), counted per connection.
    public var disconnectEvery: Int?
    public var seed: UInt64
    /// Each notification reaches the central this long after the peripheral sent it, in the order
    /// sent, and the peripheral's send does not wait for it: the write an answer follows has
    /// returned long before (a band whose answer comes after the write's response, late). Zero:
    /// delivered as sent, before the write returns.
    public var answerLateness: Duration
    /// After this many notifications over the transport's links together, each next one waits until `resumeFile` exists:
    /// a test holds a sync at a point it chooses (a disk filled mid-sync) instead of racing it.
    public var pauseAfterNotifications: Int?
    public var resumeFile: String?
    /// Each write without response reaches the peripheral after the central's next write (or
    /// `commandOvertakingWindow` later when none follows), as write commands do over EATT's several
    /// bearers (docs/testing.md, "Garmin: a file's last acknowledgement overtaken"). A link whose
    /// profile writes with response keeps its order: a request is answered before the next goes.
    public var writeCommandsOvertake: Bool

    public init(dropRate: Double = 0, duplicateRate: Double = 0, corruptRate: Double = 0, reorderRate: Double = 0,
                delay: Duration = .zero, disconnectEvery: Int? = nil, seed: UInt64 = 1, answerLateness: Duration = .zero,
                pauseAfterNotifications: Int? = nil, resumeFile: String? = nil, writeCommandsOvertake: Bool = false) {
        self.writeCommandsOvertake = writeCommandsOvertake
        self.answerLateness = answerLateness
        self.pauseAfterNotifications = pauseAfterNotifications
        self.resumeFile = resumeFile
        self.dropRate = dropRate
        self.duplicateRate = duplicateRate
        self.corruptRate = corruptRate
        self.reorderRate = reorderRate
        self.delay = delay
        self.disconnectEvery = disconnectEvery
        self.seed = seed
    }

    public static let none = FaultInjection()

    var isActive: Bool { dropRate > 0 || duplicateRate > 0 || corruptRate > 0 || reorderRate > 0 }
}

/// What happens to one packet.
enum PacketFate: Equatable {
    case deliver([UInt8])
    case drop
    case duplicate([UInt8])
    /// Keep it and deliver it after the next packet.
    case holdBack([UInt8])
}

/// Draws for the fault decisions.
struct FaultDice: Sendable {
    private var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func fate(of packet: [UInt8], faults: FaultInjection) -> PacketFate {
        if random.chance(faults.dropRate) { return .drop }
        var bytes = packet
        if random.chance(faults.corruptRate), !bytes.isEmpty {
            bytes[random.int(0...bytes.count - 1)] ^= UInt8(1) << UInt8(random.int(0...7))
        }
        if random.chance(faults.duplicateRate) { return .duplicate(bytes) }
        if random.chance(faults.reorderRate) { return .holdBack(bytes) }
        return .deliver(bytes)
    }
}
