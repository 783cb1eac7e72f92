/// The ATT MTU of a connection and what it allows per write or notification.
public struct ATTMTU: Sendable, Hashable, CustomStringConvertible {
    public static let minimum = 23
    public static let maximum = 517
    /// What a central assumes when its stack does not report the MTU.
    public static let `default` = ATTMTU(uncheckedValue: minimum)

    public let value: Int

    public init(_ value: Int) throws(ProtocolError) {
        guard (ATTMTU.minimum...ATTMTU.maximum).contains(value) else {
            throw ProtocolError(.valueOutOfRange, "ATT MTU \(value) is out of range \(ATTMTU.minimum)…\(ATTMTU.maximum)")
        }
        self.value = value
    }

    private init(uncheckedValue: Int) { value = uncheckedValue }

    /// Bytes of the stream one ATT write or notification carries: MTU − 3.
    public var chunkSize: Int { value - 3 }

    public var description: String { "MTU \(value)" }
}
