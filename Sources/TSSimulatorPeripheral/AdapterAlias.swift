import Foundation
import TSBlueZ

/// The adapter under a simulated device's own name while its peripheral runs, and under its own
/// alias again once it stops: a central reads the GAP Device Name once connected (BlueZ's Name
/// becomes it), and a band's or a ring's is its model's, not the adapter's.
public final class AdapterAlias: @unchecked Sendable {
    private let lock = NSLock()
    private var toRestore: String?

    public init() {}

    /// Names the adapter `name` unless it is already; a failure is reported, not thrown (the
    /// device still works, a central sees the adapter's alias).
    public func take(_ name: String, bluez: BlueZ, adapter: AdapterInfo, report: (String) -> Void) async {
        guard adapter.alias != name else { return }
        do {
            try await bluez.setAlias(name, adapter: adapter)
            lock.withLock { toRestore = adapter.alias }
        } catch {
            report("could not name the adapter \(name) (\(error)); a central will see it as \(adapter.alias)")
        }
    }

    /// The adapter's own alias again, when `take` changed it.
    public func restore(bluez: BlueZ, adapter: AdapterInfo) async {
        guard let alias = lock.withLock({ () -> String? in defer { toRestore = nil }; return toRestore }) else { return }
        try? await bluez.setAlias(alias, adapter: adapter)
    }
}
