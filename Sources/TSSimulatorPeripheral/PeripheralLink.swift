import Synchronization
import TSBlueZ
import TSGATT

/// A simulated peripheral's side of its one link, kept the same way by every dialect's: whether a
/// central is on it (a bonded central keeps its subscriptions across links and may only write, so
/// a link starts at the first write or subscription), which central (for a drop by fault
/// injection), the ATT MTU its writes report and the largest notifications sent. Thread-safe.
/// Package-wide, so that a family's peripheral can live in the family's own module (`Sources/Families/<Name>/Peripheral`).
package final class PeripheralLink: Sendable {
    private struct State {
        var up = false
        var central: DeviceHandle?
        var mtu: Int?
        var largest: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let reporter = Mutex<@Sendable (String) -> Void>({ _ in })

    package init() {}

    /// What one notification can carry at the ATT MTU a central's writes report: the MTU less the
    /// 2 bytes a Multiple Handle Value Notification entry adds, as bluetoothd batches notifications
    /// that way (on EATT) and cuts a longer value. Nil for an MTU too small to be one.
    package static func notificationRoom(atMTU mtu: Int) -> ATTMTU? { try? ATTMTU(mtu - 2) }

    /// Where lines for the operator go whenever something about the link happens (the
    /// peripheral's `report`, set before it starts).
    package func report(to reporter: @escaping @Sendable (String) -> Void) { self.reporter.withLock { $0 = reporter } }

    private func report(_ line: String) { reporter.withLock { $0 }(line) }

    /// True for the first caller after the link went down (or at start).
    package func claimStart() -> Bool {
        state.withLock { state in
            if state.up { return false }
            state.up = true
            return true
        }
    }

    /// True when the link was up.
    @discardableResult
    package func end() -> Bool {
        state.withLock { state in
            defer { state.up = false }
            return state.up
        }
    }

    /// The central of the last write that named one.
    package var central: DeviceHandle? { state.withLock { $0.central } }

    /// Records the ATT MTU (and central) of a write and says so when the MTU is new.
    package func noteWrite(mtu: Int, device: DeviceHandle? = nil) {
        let new = state.withLock { state in
            if let device { state.central = device }
            guard state.mtu != mtu else { return false }
            state.mtu = mtu
            return true
        }
        if new { report("the central's writes report ATT MTU \(mtu)") }
    }

    /// Says so when `size` is the largest notification of its `kind` so far (BlueZ keeps a bonded
    /// central's subscription across links, so there is no per-link StartNotify to hang
    /// statistics on; a new largest size is reported as it happens).
    package func sent(_ size: Int, kind: String = "notification") {
        let mtu: Int?? = state.withLock { state in
            guard size > state.largest[kind, default: 0] else { return nil }
            state.largest[kind] = size
            return .some(state.mtu)
        }
        guard let mtu else { return }
        report("largest \(kind) so far: \(size) bytes (ATT MTU \(mtu.map(String.init) ?? "not reported"))")
    }

    /// Ends the peripheral's side of the link each time BlueZ reports the central disconnected, until cancelled.
    package func watchDisconnections(bluez: BlueZ, adapter: AdapterInfo, centralGone: @escaping @Sendable () async -> Void) async throws -> Task<Void, Never> {
        let disconnections = try await bluez.disconnections(on: adapter)
        return Task { [weak self] in
            for await _ in disconnections {
                guard let self, self.end() else { continue }
                self.report("the central disconnected")
                await centralGone()
            }
        }
    }

    /// What a peripheral does when bluetoothd restarts: the link died with it; say how registering again went.
    package func bluetoothdEvents(centralGone: @escaping @Sendable () async -> Void) -> @Sendable (PeripheralEvent) async -> Void {
        { [weak self] event in
            guard let self else { return }
            switch event {
            case .bluetoothdReturned:
                if self.end() { await centralGone() }
            case .registeredAgain:
                self.report("bluetoothd restarted: GATT application and advertisement registered again")
            case let .registeringAgainFailed(error):
                self.report("bluetoothd restarted, but registering again failed: \(String(describing: error))")
            }
        }
    }
}
