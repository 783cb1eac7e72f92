import Foundation
import Logging
import Synchronization
import TSGatewayAPI
import TSModels

/// The daemon's view of the disk holding its database, shared by the supervisors, the MQTT
/// bridge and the upload outbox. Each tells it of a write the disk refused (`noticed`); the
/// first refusal of a spell is said once — in the log, as a `storage` event of every watch, in
/// the Gateway2 `Storage` property and MQTT's state — and the disk is then looked at every
/// `checkInterval` until it takes writes again, which is said the same way; then every
/// `whenWritable` action runs (a wrist edit kept in memory is stored, syncs go on).
///
/// Nothing is acknowledged to a watch meanwhile: a sync whose records the disk refused fails
/// before its acknowledgement (`SleepSync`), and the next one after the disk is back fetches them.
public final class StorageHealth: Sendable {
    public let directory: String
    let watches: [WatchID]
    let checkInterval: Duration
    let logger: Logger
    let publish: @Sendable (GatewayEvent) -> Void
    private let state = Mutex(State())

    struct State {
        var condition: StorageCondition?
        var reason: String?
        var whenWritable: [@Sendable () async -> Void] = []
    }

    /// `directory`: the database's; `watches`: the ids each event is published for.
    public init(directory: String, watches: [WatchID], checkInterval: Duration = .seconds(5), logger: Logger,
                publish: @escaping @Sendable (GatewayEvent) -> Void) {
        self.directory = directory
        self.watches = watches
        self.checkInterval = checkInterval
        self.logger = logger
        self.publish = publish
    }

    /// How much must be free before a full disk counts as taking writes again.
    static let recoveryReserve: UInt64 = 1024 * 1024

    /// Why the disk takes no writes now; nil while it does.
    public var condition: StorageCondition? { state.withLock { $0.condition } }

    /// The refusal as the gateway said it (`StorageUnwritable`'s text); nil while the disk takes writes.
    public var reason: String? { state.withLock { $0.reason } }

    /// The condition a failed write names, if the disk refused it (full or read-only).
    public static func condition(of error: any Error) -> StorageCondition? {
        if let unwritable = error as? StorageUnwritable { return unwritable.condition }
        return switch ErrorCategory.of(error) {
        case .storageFull: .full
        case .storageReadOnly: .readOnly
        default: nil
        }
    }

    /// Tells of a failed write: true when the disk refused it (and the spell is said, once).
    @discardableResult
    public func noticed(_ error: any Error) -> Bool {
        guard let condition = Self.condition(of: error) else { return false }
        let reason = StorageUnwritable(condition, directory: directory,
                                       consequence: "no sync acknowledges anything to the watches, and what they send is kept in memory where it can be",
                                       retry: condition == .full ? "the gateway goes on by itself" : "restart the service (its files must be closed for the disk's check)").description
        let isNew = state.withLock { state in
            guard state.condition != condition else { return false }
            state.condition = condition
            state.reason = reason
            return true
        }
        guard isNew else { return true }
        logger.error("\(reason)")
        for watch in watches { publish(GatewayEvent(.storage(condition: condition, reason: reason), watch: watch)) }
        return true
    }

    /// Runs `action` each time the disk takes writes again after a refusal.
    public func whenWritable(_ action: @escaping @Sendable () async -> Void) {
        state.withLock { $0.whenWritable.append(action) }
    }

    /// Until cancelled: while the disk refuses writes, looks at it every `checkInterval`
    /// (`statvfs`: not read-only, some space left) and says when it takes writes again.
    public func run() async {
        while (try? await Task.sleep(for: checkInterval)) != nil {
            // Writable again with room to spare: a disk with a few KiB free would refuse the next sync again.
            guard condition != nil, StorageCondition.of(path: directory, reserve: Self.recoveryReserve) == nil else { continue }
            let actions = state.withLock { state in
                state.condition = nil
                state.reason = nil
                return state.whenWritable
            }
            logger.notice("the disk holding \(directory) takes writes again")
            for watch in watches { publish(GatewayEvent(.storage(condition: nil, reason: nil), watch: watch)) }
            for action in actions { await action() }
        }
    }
}
