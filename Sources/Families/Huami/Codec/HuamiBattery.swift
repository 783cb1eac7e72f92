import TSModels

/// The battery characteristic (`…0006…`) (protocol-spec/huami/huami.md §6): byte 1 the level in
/// percent, byte 2 the state (0 normal, 1 charging). The rest (dates of the last charge and of
/// the last time the band was off) is not read: the sources disagree where the last-charge date starts.
public struct HuamiBattery: Sendable, Hashable {
    public static let size = 20

    public var level: UInt8
    /// 0 = not charging, 1 = charging; others are kept and read as an unknown state.
    public var state: UInt8

    public init(level: UInt8, state: UInt8) {
        self.level = level
        self.state = state
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 3 else { throw HuamiError(.tooShort, "a battery reading has at least 3 bytes, not \(raw.count)") }
        guard raw[1] <= 100 else { throw HuamiError(.valueOutOfRange, "the band reports a battery level of \(raw[1]) %") }
        level = raw[1]
        state = raw[2]
    }

    public var status: BatteryStatus {
        BatteryStatus(level: level, state: state == 0 ? .discharging : state == 1 ? .charging : .unknown)
    }

    /// 20 bytes: `00`, level, state, then zeros (the simulated band's reading; no source reads byte 0).
    public var bytes: [UInt8] {
        [0x00, level, state] + [UInt8](repeating: 0, count: Self.size - 3)
    }
}
