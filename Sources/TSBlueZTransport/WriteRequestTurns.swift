/// One ATT Write Request at a time on a link. bluetoothd refuses a second `WriteValue` of type
/// `request` to a characteristic while one is in flight (`org.bluez.Error.InProgress`, "that
/// operation is already in progress"), where write commands would both have gone; a central that
/// writes while its last write is unanswered (protocol v1's sleep-page acknowledgements) waits
/// its turn here instead (issue 47's before-response run: v1's sync lost its link so on a
/// watch whose characteristic takes write requests only). Turns are taken in the order asked.
actor WriteRequestTurns {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `write` once no other write request of this link is in flight.
    func take<Result: Sendable>(_ write: @Sendable () async throws -> Result) async throws -> Result {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer { handOver() }
        return try await write()
    }

    private func handOver() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
