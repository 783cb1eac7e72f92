import TSModels
import TSTransport

/// The link lifecycle every dialect's central shares, written once: open the link (timed, a new
/// generation so that a late event of an older link is ignored, its events pumped to the central,
/// the first byte timed), close it, forget it when it ends, fail a connect's description with the
/// link closed, and take one request at a time on it. A central keeps the state and says what a
/// notification means to it (`received`) and what it lets go of when its link ends (`releaseLink`).
/// Package-wide so that a family's central can live in the family's own module (`Sources/Families/<Name>/Central`).
package protocol LinkedCentral: WatchCentral, Actor {
    var transport: any WatchTransport { get }
    var connection: (any TransportConnection)? { get set }
    var connectionGeneration: Int { get set }
    var connectTimings: ConnectTimings { get set }
    var requestTurns: RequestTurns { get set }
    /// Bytes the watch notified on the current link.
    func received(_ bytes: [UInt8]) async
    /// Called once when the current link ends, `connection` already cleared: fail what waits on
    /// it with `reason`, finish its streams, announce the loss.
    func releaseLink(reason: String)
}

extension LinkedCentral {
    /// Opens the link and makes it the current one; its events reach `received` and its end
    /// `releaseLink` until a newer link replaces it.
    @discardableResult
    package func openLink() async throws -> (connection: any TransportConnection, generation: Int, pump: Task<Void, Never>) {
        let started = ContinuousClock.now
        connectTimings = ConnectTimings()
        let opening = try await LinkOpening.open(transport, started: started)
        connectTimings.linkOpen = opening.linkOpen
        connection = opening.connection
        connectionGeneration += 1
        let generation = connectionGeneration
        let pump = LinkOpening.pumpEvents(of: opening.connection) { [weak self] event in
            await self?.pumped(event, generation: generation, started: started)
        } ended: { [weak self] in await self?.linkEnded(generation: generation, reason: "the link closed") }
        return (opening.connection, generation, pump)
    }

    private func pumped(_ event: TransportEvent, generation: Int, started: ContinuousClock.Instant) async {
        guard generation == connectionGeneration else { return }
        switch event {
        case let .notification(bytes):
            if connectTimings.firstByte == nil { connectTimings.firstByte = .now - started }
            await received(bytes)
        case let .disconnected(reason):
            linkEnded(generation: generation, reason: reason)
        }
    }

    /// Forgets link `generation` once, if it is still the current one.
    package func linkEnded(generation: Int, reason: String) {
        guard generation == connectionGeneration, connection != nil else { return }
        connection = nil
        releaseLink(reason: reason)
    }

    /// Closes the current link; what waits on it fails as "disconnected by the gateway".
    package func closeLink() async {
        guard let open = connection else { return }
        await open.close()
        linkEnded(generation: connectionGeneration, reason: "disconnected by the gateway")
    }

    /// What a connect learns once the link is open; a failure closes the link before it is thrown.
    package func describing(_ body: () async throws -> DeviceInfo) async throws -> DeviceInfo {
        do {
            return try await body()
        } catch {
            await closeLink()
            throw error
        }
    }

    /// Waits for this central's turn to send a request (first come, first served); `endTurn` passes it on.
    package func takeTurn() async {
        if !requestTurns.take() { await withCheckedContinuation { requestTurns.enqueue($0) } }
    }

    package func endTurn() { requestTurns.release() }
}

/// One request at a time on a link, in the order they asked.
package struct RequestTurns: Sendable {
    package init() {}

    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// True: the turn is the caller's now; false: it is taken, and the caller waits (`enqueue`).
    mutating func take() -> Bool {
        if taken { return false }
        taken = true
        return true
    }

    mutating func enqueue(_ waiter: CheckedContinuation<Void, Never>) { waiting.append(waiter) }

    /// Passes the turn to the first who waits, or frees it.
    mutating func release() {
        if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
    }
}
