import Foundation
import TSBlueZ
import TSModels
import TSTransport

/// What `tsgateway simulate` asks of a family: its simulated device as a real BlueZ peripheral
/// (GATT application and LE advertisement) until told to stop. The command reads this and
/// branches on no dialect's name.
public struct SimulatedPeripheralFamily: Sendable {
    /// The options of `simulate` it takes beyond the ones every family takes (`--days`, `--seed`, `--ground-truth`, `--answer-timing`).
    public var options: Set<SimulateOption>
    /// Its `--fault` kinds, for `--help` and errors; empty: it takes none.
    public var faultKinds: String
    /// Checks what it was given before anything touches Bluetooth (faults parse, values in range);
    /// throws `SimulateSettingsError` with what to type instead.
    public var validate: @Sendable (SimulateSettings) throws(SimulateSettingsError) -> Void
    public var run: @Sendable (PeripheralSession) async throws -> Void

    public init(options: Set<SimulateOption>, faultKinds: String = "",
                validate: @escaping @Sendable (SimulateSettings) throws(SimulateSettingsError) -> Void = { _ throws(SimulateSettingsError) in },
                run: @escaping @Sendable (PeripheralSession) async throws -> Void) {
        self.options = options
        self.faultKinds = faultKinds
        self.validate = validate
        self.run = run
    }
}

/// The options of `simulate` a family may take, by the name the user types.
public enum SimulateOption: String, Sendable, CaseIterable, Comparable {
    case dropLinkAfterPages = "--drop-link-after-pages"
    case protocolVersion = "--protocol"
    case noStandardServices = "--no-standard-services"
    case liveStageInterval = "--live-stage-interval"
    case advertiseService = "--advertise-service"
    case fault = "--fault"
    case notificationSize = "--notification-size"
    case heartRateHistory = "--heart-rate-history"
    case heartRateTruth = "--heart-rate-truth"
    case stepsTruth = "--steps-truth"

    public static func < (lhs: SimulateOption, rhs: SimulateOption) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What `simulate` was given, as typed; each family reads what it takes.
public struct SimulateSettings: Sendable {
    public var days = 90
    public var seed: UInt64 = 20_251_119
    /// Where the generated sleep records go as JSON (the ground truth a sync must reproduce).
    public var groundTruth: String?
    public var dropLinkAfterPages: Int?
    public var protocolVersion: String?
    public var noStandardServices = false
    public var liveStageInterval: Int?
    public var advertiseService: String?
    /// `--fault KIND[:N]` as given, in order (`--sleep-fault`, `--ring-fault` are its other names).
    public var faults: [String] = []
    public var notificationSize: String?
    public var heartRateHistory = false
    public var heartRateTruth: String?
    public var stepsTruth: String?
    /// When the device's answer to a write goes out (`AnswerTiming`'s words), every family.
    public var answerTiming: String?

    public init() {}

    /// `--answer-timing`, immediate when not given.
    public func parsedAnswerTiming() throws(SimulateSettingsError) -> AnswerTiming {
        guard let answerTiming else { return .immediate }
        do throws(AnswerTimingError) { return try AnswerTiming(text: answerTiming) } catch { throw SimulateSettingsError(error.description) }
    }

    /// The family-specific options given, whether or not the family takes them.
    public var given: Set<SimulateOption> {
        var given: Set<SimulateOption> = []
        if dropLinkAfterPages != nil { given.insert(.dropLinkAfterPages) }
        if protocolVersion != nil { given.insert(.protocolVersion) }
        if noStandardServices { given.insert(.noStandardServices) }
        if liveStageInterval != nil { given.insert(.liveStageInterval) }
        if advertiseService != nil { given.insert(.advertiseService) }
        if !faults.isEmpty { given.insert(.fault) }
        if notificationSize != nil { given.insert(.notificationSize) }
        if heartRateHistory { given.insert(.heartRateHistory) }
        if heartRateTruth != nil { given.insert(.heartRateTruth) }
        if stepsTruth != nil { given.insert(.stepsTruth) }
        return given
    }
}

/// A `simulate` setting that cannot be used: what was wrong and what to type.
public struct SimulateSettingsError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    public var category: ErrorCategory { .invalidInput }
}

/// One run of a simulated peripheral: BlueZ, the powered adapter, the settings and what the
/// command does for every family (print a line, write a private file, react to a signal, wait to stop).
public struct PeripheralSession: Sendable {
    public var bluez: BlueZ
    public var adapter: AdapterInfo
    public var settings: SimulateSettings
    /// The simulated watch's clock (TSGATEWAY_SIMULATOR_NOW pins it).
    public var now: Date
    /// Prints a line for the operator at once.
    public var say: @Sendable (String) -> Void
    /// Writes personal data (a ground truth) readable by its owner only.
    public var writePrivate: @Sendable (Data, String) throws -> Void
    /// Runs the action each time the process receives the signal, until the task is cancelled.
    public var onSignal: @Sendable (Int32, @escaping @Sendable () async -> Void) -> Task<Void, Never>
    /// Returns when the run should stop (its duration, or SIGINT / SIGTERM).
    public var waitForStop: @Sendable () async -> Void

    public init(bluez: BlueZ, adapter: AdapterInfo, settings: SimulateSettings, now: Date, say: @escaping @Sendable (String) -> Void,
                writePrivate: @escaping @Sendable (Data, String) throws -> Void,
                onSignal: @escaping @Sendable (Int32, @escaping @Sendable () async -> Void) -> Task<Void, Never>,
                waitForStop: @escaping @Sendable () async -> Void) {
        self.bluez = bluez
        self.adapter = adapter
        self.settings = settings
        self.now = now
        self.say = say
        self.writePrivate = writePrivate
        self.onSignal = onSignal
        self.waitForStop = waitForStop
    }

    /// SIGUSR1 starts the advertisement anew until the task is cancelled: a central that starts
    /// scanning after it began may never get a report (btvirt reports an advertisement once, as
    /// scanning starts).
    public func advertiseAnewOnSIGUSR1(_ advertiseAgain: @escaping @Sendable () async throws -> Void) -> Task<Void, Never> {
        let say = self.say
        return onSignal(SIGUSR1) {
            do {
                try await advertiseAgain()
                say("advertising anew")
            } catch {
                say("advertising anew failed: \(error)")
            }
        }
    }

    /// `value` as sorted-key JSON, written readable by its owner only.
    public func writeJSON<Value: Encodable>(_ value: Value, to path: String) throws {
        try writePrivate(try JSONCoding.recordEncoder().encode(value), path)
    }
}
