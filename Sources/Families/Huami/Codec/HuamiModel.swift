/// The models this dialect covers, with what differs between them (protocol-spec/huami/huami.md §10):
/// the auth flags and the size of a per-minute sample, which depends on the firmware on some.
public enum HuamiModel: String, Sendable, Hashable, CaseIterable {
    case miBand3, miBand4, miBand5, miBand6, bip, bipS, bipU, gts, gtr, gts2, gtr2

    /// The name a model advertises (Gadgetbridge's coordinators), matched whole, ignoring case.
    public var advertisedNames: [String] {
        switch self {
        case .miBand3: ["Mi Band 3", "Xiaomi Band 3"]
        case .miBand4: ["Mi Smart Band 4"]
        case .miBand5: ["Mi Smart Band 5"]
        case .miBand6: ["Mi Smart Band 6"]
        case .bip: ["Amazfit Bip Watch"]
        case .bipS: ["Amazfit Bip S"]
        case .bipU: ["Amazfit Bip U"]
        case .gts: ["Amazfit GTS"]
        case .gtr: ["Amazfit GTR"]
        case .gts2: ["Amazfit GTS 2"]
        case .gtr2: ["Amazfit GTR 2"]
        }
    }

    /// The model that advertises `name`; nil for any other name.
    public init?(advertisedName name: String) {
        let wanted = name.lowercased()
        guard let model = Self.allCases.first(where: { $0.advertisedNames.contains { $0.lowercased() == wanted } }) else { return nil }
        self = model
    }

    public var authFlags: HuamiAuthFlags {
        switch self {
        case .bip: .bip
        case .miBand3: .miBand3
        default: .crypt
        }
    }

    /// 8-byte samples on the Mi Band 5/6, Bip U, GTS 2, GTR 2 always; on the GTS with firmware
    /// above 0.0.9.00; on the GTR with firmware 1.3.5.79 or later, or (outside the 47 mm scheme
    /// 1.0.0.00 … 1.6.0.00) 0.1.1.15 or later. 4-byte samples otherwise, and when the firmware is unknown.
    public func sampleFormat(firmware: String?) -> HuamiSampleFormat {
        switch self {
        case .miBand5, .miBand6, .bipU, .gts2, .gtr2: return .eightByte
        case .miBand3, .miBand4, .bip, .bipS: return .fourByte
        case .gts:
            guard let v = firmware.flatMap(Self.version) else { return .fourByte }
            return Self.compare(v, [0, 0, 9, 0]) > 0 ? .eightByte : .fourByte
        case .gtr:
            guard let v = firmware.flatMap(Self.version) else { return .fourByte }
            let is47mm = Self.compare(v, [1, 0, 0, 0]) >= 0 && Self.compare(v, [1, 6, 0, 0]) < 0
            return Self.compare(v, [1, 3, 5, 79]) >= 0 || (!is47mm && Self.compare(v, [0, 1, 1, 15]) >= 0) ? .eightByte : .fourByte
        }
    }

    /// `1.3.5.79` → [1, 3, 5, 79]; nil when a part is not a number.
    static func version(_ text: String) -> [Int]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
        return parts.map { $0! }
    }

    static func compare(_ a: [Int], _ b: [Int]) -> Int {
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0, y = i < b.count ? b[i] : 0
            if x != y { return x < y ? -1 : 1 }
        }
        return 0
    }
}
