import Foundation
import Synchronization
import TSBlueZ
import TSTransport

/// A simulated device's life as a BlueZ peripheral, the same for every family: registered (the
/// watch on BlueZ's disconnections first, so that no link's end is missed; then the adapter under
/// the device's name, as a central reads the GAP Device Name once connected; then the GATT
/// application and the advertisement), answering (notifications when its `AnswerTiming` says,
/// the link's MTU and central noted from each write), advertising again on request, and stopped
/// (the watch cancelled, queued answers dropped, application and advertisement withdrawn, the
/// adapter's own alias back). A family's peripheral builds its services and wires its device to
/// them; everything else about the registration lives here once.
public final class PeripheralLifecycle: Sendable {
    public let bluez: BlueZ
    public let adapter: AdapterInfo
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public let answers: TimedNotifications
    /// The device's side of its one link.
    package let link = PeripheralLink()
    private let alias = AdapterAlias()
    private struct State {
        var peripheral: BlueZPeripheral?
        var disconnectWatcher: Task<Void, Never>?
        var whenStopping: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())
    private let reporter = Mutex<@Sendable (String) -> Void>({ _ in })

    public init(bluez: BlueZ, adapter: AdapterInfo, answerTiming: AnswerTiming = .immediate) {
        self.bluez = bluez
        self.adapter = adapter
        answers = TimedNotifications(answerTiming)
    }

    /// Where lines for the operator go whenever something about the link happens; set it before `register`.
    public var report: @Sendable (String) -> Void {
        get { reporter.withLock { $0 } }
        set {
            reporter.withLock { $0 = newValue }
            link.report(to: newValue)
        }
    }

    /// Registers the device: BlueZ's disconnections end its side of the link (`centralGone`), the
    /// adapter carries `adapterName` while it runs (nil keeps the adapter's alias), the device
    /// answers a central's pairing as `agent` says (the default agent: Just Works, or a passkey it
    /// displays), and the application and the advertisement are registered, again after a
    /// bluetoothd restart.
    public func register(application: GattApplication, advertisement: LEAdvertisement, adapterName: String?,
                         agent: PairingAgent = .justWorks, centralGone: @escaping @Sendable () async -> Void) async throws {
        let watcher = try await link.watchDisconnections(bluez: bluez, adapter: adapter, centralGone: centralGone)
        state.withLock { $0.disconnectWatcher = watcher }
        if let adapterName { await alias.take(adapterName, bluez: bluez, adapter: adapter, report: report) }
        do { try await bluez.registerAgent(agent) } catch {
            report("could not register the device's pairing agent (\(error)); a central's pairing is answered by whichever agent BlueZ has")
        }
        let peripheral = BlueZPeripheral(bluez: bluez, adapter: adapter, application: application, advertisement: advertisement)
        state.withLock { $0.peripheral = peripheral }
        let linkEvents = link.bluetoothdEvents(centralGone: centralGone)
        let bluez = self.bluez
        try await peripheral.start(events: { [weak self] event in
            await linkEvents(event)
            // A restarted bluetoothd forgot the agent with everything else: the device's side of a
            // pairing would find none and refuse it.
            guard case .registeredAgain = event else { return }
            do { try await bluez.registerAgent(agent) } catch {
                self?.report("bluetoothd restarted, but registering the device's pairing agent again failed (\(error))")
            }
        })
    }

    /// Sends `value` as a Value change of `characteristic` when the answer timing says (at once
    /// when not `timed`: a value the device sends of its own, not an answer), and notes its size
    /// among the `kind`'s (the largest so far is reported).
    public func notify(_ value: [UInt8], characteristic: String, kind: String = "notification", timed: Bool = true) {
        let send: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            try? self.registered?.notify(value, characteristic: characteristic)
            self.link.sent(value.count, kind: kind)
        }
        if timed { answers.send(send) } else { send() }
    }

    /// Notes the ATT MTU and the central a write reports (BlueZ passes both with each write) and
    /// returns the MTU, nil when the write did not report one.
    @discardableResult
    public func noteWrite(_ options: GattWriteOptions) -> Int? {
        guard let mtu = options.mtu else { return nil }
        link.noteWrite(mtu: mtu, device: options.device)
        return mtu
    }

    /// True for the first subscription or write after the link went down (or at start): a bonded
    /// central keeps its subscriptions across links and may only write, so a link starts there.
    public func claimLinkStart() -> Bool { link.claimStart() }

    /// Ends the device's side of the link (a central unsubscribed); true when it was up.
    @discardableResult
    public func endLink() -> Bool { link.end() }

    /// Disconnects the central of the link's last write from the device's side (fault injection),
    /// after saying `line`; nothing when no write named a central.
    public func disconnectCentral(saying line: String) async {
        guard let device = link.central else { return }
        report(line)
        try? await bluez.disconnect(device)
    }

    /// Work of the family's own to stop with the device (its notification forwarders, a beating heart).
    public func whenStopping(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.whenStopping.append(work) }
    }

    /// Starts the advertisement anew (see `BlueZPeripheral.advertiseAgain`).
    public func advertiseAgain() async throws {
        try await registered?.advertiseAgain()
    }

    /// Withdraws the advertisement and the application and gives the adapter its own alias back.
    public func stop() async {
        let (watcher, work) = state.withLock { state in
            defer { state.whenStopping = [] }
            return (state.disconnectWatcher, state.whenStopping)
        }
        watcher?.cancel()
        work.forEach { $0() }
        answers.stop()
        await registered?.stop()
        await alias.restore(bluez: bluez, adapter: adapter)
    }

    private var registered: BlueZPeripheral? { state.withLock { $0.peripheral } }
}

/// A family's simulated device as a BlueZ peripheral: it builds its GATT application and
/// advertisement and registers them through its `lifecycle`, which answers for the rest.
public protocol SimulatedPeripheral: AnyObject, Sendable {
    var lifecycle: PeripheralLifecycle { get }
}

extension SimulatedPeripheral {
    public var adapter: AdapterInfo { lifecycle.adapter }
    /// When its answers go out (`tsgateway simulate --answer-timing`).
    public var answers: TimedNotifications { lifecycle.answers }
    /// Where lines for the operator go; set it before the peripheral starts.
    public var report: @Sendable (String) -> Void {
        get { lifecycle.report }
        set { lifecycle.report = newValue }
    }

    /// Starts the advertisement anew (`simulate`'s SIGUSR1).
    public func advertiseAgain() async throws { try await lifecycle.advertiseAgain() }

    /// Withdraws the advertisement and the application.
    public func stop() async { await lifecycle.stop() }
}
