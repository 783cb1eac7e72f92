import TSModels

/// A watch as `--device` (or an MQTT topic, or a D-Bus caller) may name it.
public struct WatchIdentity: Sendable, Hashable {
    public var id: WatchID
    public var name: String?

    public init(id: WatchID, name: String?) {
        self.id = id
        self.name = name
    }

    /// `device` names this watch: its address in any case, or its name exactly.
    public func isNamed(by device: String) -> Bool {
        WatchID(device) == id || name == device
    }
}

/// Which watch a command means, by one rule for every front door.
public enum WatchSelection {
    /// With `device`: the watch it names among `known`, nil when none does. Without: the only
    /// one known; none or several is an error.
    public static func choose(_ device: String?, among known: [WatchIdentity]) throws(WatchSelectionError) -> WatchIdentity? {
        if let device { return known.first { $0.isNamed(by: device) } }
        guard let only = known.first else { throw .noneKnown }
        guard known.count == 1 else { throw .several(known) }
        return only
    }
}

public enum WatchSelectionError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    case noneKnown
    case several([WatchIdentity])
    /// Neither an address nor the name of a known watch.
    case unknown(String)

    public var category: ErrorCategory { .deviceNotFound }

    public var description: String {
        switch self {
        case .noneKnown: "no watch known yet; pass --device ADDRESS (find it with `tsgateway scan`), or add --simulate"
        case let .several(watches):
            "several watches are known (\(watches.map { watch in watch.name.map { "\($0) (\(watch.id))" } ?? watch.id.rawValue }.joined(separator: ", "))); choose one with --device"
        case let .unknown(text): "\"\(text)\" is neither a Bluetooth address (AA:BB:CC:DD:EE:FF) nor the name of a known watch; see `tsgateway devices`"
        }
    }
}
