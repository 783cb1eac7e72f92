import Synchronization
import TSDevice
import TSFamilyKit
import TSGarminFamily
import TSHuamiFamily
import TSNpkFamily
import TSProtocolV1Family
import TSModels
import TSQRingFamily
import TSWatchService

/// The families this build knows.
public enum WatchFamilies {
    /// One line per family: its registration.
    public static let builtIn: [WatchFamily] = [.protocolV1, .standardServices, .npk, .qring, .huami, .garmin]

    private static let registered = Mutex<[WatchFamily]>(builtIn)

    /// Every family known, the built-in ones first.
    public static var all: [WatchFamily] { registered.withLock { $0 } }

    /// Adds a family at run time (a test's own); one of the same name is replaced. Its dialect is
    /// then among `dialects`, so dialect resolution, the configuration reader and `pair` know it.
    public static func register(_ family: WatchFamily) {
        registered.withLock { known in
            known.removeAll { $0.name == family.name }
            known.append(family)
        }
    }

    /// Every known family's dialect, the built-in ones first: what dialect resolution, `probe`,
    /// `scan`, `--dialect`, the configuration reader and `pair` choose among.
    public static var dialects: [WatchDialect] { all.map(\.dialect) }

    /// The names and pairing secrets of every known family's dialect (the configuration reader's, `pair`'s).
    public static var dialectTerms: [DialectTerms] { dialects.map(\.terms) }

    /// The dialect called `name`, or an error that lists the ones there are.
    public static func dialect(named name: Dialect) throws(DialectError) -> WatchDialect { try dialects.named(name) }

    /// The dialect whose central speaks to a watch no rule names (`Dialect.fallback`, protocol v1's: a built-in family).
    public static var fallback: WatchDialect { WatchFamily.protocolV1.dialect }

    /// The family called `name`, or an error that lists the ones there are.
    public static func named(_ name: Dialect) throws(DialectError) -> WatchFamily {
        guard let found = all.first(where: { $0.name == name }) else { throw DialectError(name: name, known: all.map(\.name)) }
        return found
    }

    /// The families that have a simulated device.
    public static var simulated: [WatchFamily] { all.filter { $0.simulated != nil } }

    /// The simulated watch of the family asked for (else the one the options imply), opened in
    /// its dialect: the CLI's `--simulate` and a `simulated: true` watch of serve.
    public static func openSimulated(_ options: SimulatedWatchOptions, dialect asked: Dialect? = nil,
                                     configuration: WatchConfiguration = WatchConfiguration()) throws -> OpenedSimulatedWatch {
        let family = try named(asked ?? options.impliedDialect)
        guard let simulated = family.simulated else {
            let names = Self.simulated.map(\.name.rawValue).joined(separator: ", ")
            throw CategorizedFailure(.invalidInput, "the \(family.name) dialect has no simulated watch; the simulated watch speaks \(names)")
        }
        let link = try simulated.open(options)
        var configuration = configuration
        if configuration.pairingSecret == nil { configuration.pairingSecret = link.pairingSecret }
        let opened = WatchOpener.open(.transport(link.transport), dialect: family.dialect, configuration: configuration)
        return OpenedSimulatedWatch(central: opened.central, device: link.device)
    }
}

extension WatchFamilies {
    /// Why `settings` cannot go to `family`'s simulated peripheral: an option it does not take
    /// (and which families take it), or what its own check found; nil when it can.
    public static func problem(with settings: SimulateSettings, for family: WatchFamily) -> SimulateSettingsError? {
        guard let peripheral = family.peripheral else {
            let names = all.filter { $0.peripheral != nil }.map(\.name.rawValue).joined(separator: ", ")
            return SimulateSettingsError("--dialect \(family.name) has no simulated peripheral; `simulate` runs \(names)")
        }
        for option in settings.given.subtracting(peripheral.options).sorted() {
            let takers = all.filter { $0.peripheral?.options.contains(option) == true }.map { "--dialect \($0.name)" }
            let whom = takers.isEmpty ? "no dialect" : takers.joined(separator: " or ")
            return SimulateSettingsError("\(option.rawValue) is for \(whom), not --dialect \(family.name)")
        }
        do throws(SimulateSettingsError) {
            _ = try settings.parsedAnswerTiming()
            try peripheral.validate(settings)
        } catch { return error }
        return nil
    }
}
